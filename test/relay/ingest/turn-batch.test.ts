import { describe, expect, it } from 'vitest'
import { TurnBatch } from '../../../src/relay/ingest/turn-batch'
import { waitFor } from '../../support/wait-for'

// TurnBatch's `maxWriting` (PostgreSQL's group commit: src/relay/ingest/group-commit.ts): while
// that many groups are being written, the next waits and grows instead of being written beside.

/** A batcher whose writes end when the test says; `writes` lists each write's items. */
function heldBatch(maxWriting?: number) {
  const writes: string[][] = []
  const ends: (() => void)[] = []
  const batch = new TurnBatch<string>({
    maxWriting,
    write: (items) =>
      new Promise<void>((resolve) => {
        writes.push([...items])
        ends.push(resolve)
      }),
  })
  return { batch, writes, ends }
}

const turn = () => new Promise((resolve) => setImmediate(resolve))

describe('TurnBatch with maxWriting', () => {
  it('holds the next group while the limit is being written, then writes it whole', async () => {
    const { batch, writes, ends } = heldBatch(1)
    const settled: string[] = []
    const a = batch.add(['a']).then(() => settled.push('a'))
    await waitFor(() => (writes.length === 1 ? true : undefined), 'the first write')
    const b = batch.add(['b']).then(() => settled.push('b'))
    await turn()
    const c = batch.add(['c']).then(() => settled.push('c'))
    await turn()
    await turn()
    expect(writes).toEqual([['a']]) // b and c wait for a's write to end
    ends[0]!()
    await a
    await waitFor(() => (writes.length === 2 ? true : undefined), 'the second write')
    expect(writes).toEqual([['a'], ['b', 'c']])
    expect(settled).toEqual(['a']) // answered only once their own write ends
    ends[1]!()
    await Promise.all([b, c])
    expect(settled).toEqual(['a', 'b', 'c'])
  })

  it('writes groups beside each other without it', async () => {
    const { batch, writes, ends } = heldBatch()
    const a = batch.add(['a'])
    await waitFor(() => (writes.length === 1 ? true : undefined), 'the first write')
    const b = batch.add(['b'])
    await waitFor(() => (writes.length === 2 ? true : undefined), 'the second write')
    expect(writes).toEqual([['a'], ['b']])
    for (const end of ends) end()
    await Promise.all([a, b])
  })

  it('writes the waiting group at once on flush, whatever is being written', async () => {
    const { batch, writes, ends } = heldBatch(1)
    const a = batch.add(['a'])
    await waitFor(() => (writes.length === 1 ? true : undefined), 'the first write')
    const b = batch.add(['b'])
    const flushed = batch.flush()
    expect(writes).toEqual([['a'], ['b']])
    for (const end of ends) end()
    await Promise.all([a, b, flushed])
  })
})
