import { afterEach, describe, expect, it, vi } from 'vitest'
import { GroupCommit } from '../../../src/relay/ingest/group-commit'
import { ingest } from '../../../src/relay/ingest/ingest'
import { IngestError } from '../../../src/relay/ingest/ingest-error'
import { answerOf } from '../../../src/relay/ingest/routes'
import type { SqliteDatabase } from '../../../src/relay/store/sqlite/schema'
import { openSqliteStoreWithDb } from '../fixtures/store'
import type { NewDelivery } from '../../../src/relay/store/store'
import { waitFor } from '../../support/wait-for'

const source = { name: 'web', destinations: ['Webhooks'] }
const track = (messageId: string) => ({ type: 'track', userId: 'u1', event: 'E', messageId })
const delivery = (messageId: string): NewDelivery => ({
  source: 'web',
  destination: 'Webhooks',
  messageId,
  type: 'track',
  json: JSON.stringify(track(messageId)),
})

let db: SqliteDatabase
afterEach(() => db.close())

async function setup() {
  const { store: outbox, db: opened } = await openSqliteStoreWithDb()
  db = opened
  const enqueue = vi.spyOn(outbox, 'enqueue')
  const stored = () => db.prepare('SELECT message_id FROM deliveries ORDER BY id').pluck().all() as string[]
  return { outbox, commits: new GroupCommit(outbox), enqueue, stored }
}

// Makes any transaction holding the message id 'poison' fail, as a full disk would.
function poison() {
  db.exec(`CREATE TRIGGER fail_poison BEFORE INSERT ON deliveries WHEN NEW.message_id = 'poison'
           BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END`)
}

describe('GroupCommit', () => {
  it('writes the deliveries of concurrent requests in one transaction and settles each only after it', async () => {
    const { commits, enqueue, stored } = await setup()
    const settled: string[] = []
    const first = commits.commit([delivery('a1'), delivery('a2')]).then(() => settled.push('first'))
    const second = commits.commit([delivery('b1')]).then(() => settled.push('second'))
    await Promise.resolve()
    expect(settled).toEqual([]) // nothing is answered before the commit
    expect(enqueue).not.toHaveBeenCalled()

    await Promise.all([first, second])
    expect(enqueue).toHaveBeenCalledTimes(1)
    expect(enqueue.mock.calls[0]![0].map((d) => d.messageId)).toEqual(['a1', 'a2', 'b1'])
    expect(settled).toEqual(['first', 'second'])
    expect(stored()).toEqual(['a1', 'a2', 'b1'])
  })

  it('starts a new group for requests that come after a commit', async () => {
    const { commits, enqueue, stored } = await setup()
    await commits.commit([delivery('a1')])
    await commits.commit([delivery('b1')])
    expect(enqueue).toHaveBeenCalledTimes(2)
    expect(stored()).toEqual(['a1', 'b1'])
  })

  it('rejects every request of a failed group and stores none of it', async () => {
    const { commits, stored } = await setup()
    poison()
    const results = await Promise.allSettled([
      commits.commit([delivery('a1')]),
      commits.commit([delivery('b1'), delivery('poison')]),
    ])
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected'])
    expect(results[0]).toMatchObject({ reason: { message: 'disk I/O error' } })
    expect(stored()).toEqual([])

    // The next group is unaffected.
    await commits.commit([delivery('c1')])
    expect(stored()).toEqual(['c1'])
  })

  it('writes a group that failed on its data again request by request: only the offending one is rejected', async () => {
    const { outbox, commits, enqueue, stored } = await setup()
    // The store's own enqueue (the spy wraps the instance's).
    const write = Object.getPrototypeOf(outbox).enqueue.bind(outbox) as typeof outbox.enqueue
    // PostgreSQL refusing a value (SQLSTATE 22021), for any transaction holding 'poison'.
    enqueue.mockImplementation(async (deliveries) => {
      if (deliveries.some((d) => d.messageId === 'poison'))
        throw Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: '22021' })
      return write(deliveries)
    })
    const results = await Promise.allSettled([
      commits.commit([delivery('a1')]),
      commits.commit([delivery('b1'), delivery('poison')]),
      commits.commit([delivery('c1')]),
    ])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect(results[1]).toMatchObject({ reason: { code: '22021' } })
    expect(stored()).toEqual(['a1', 'c1'])
  })

  it('answers a request with nothing to write at once, without a transaction', async () => {
    const { commits, enqueue } = await setup()
    await commits.commit([])
    expect(enqueue).not.toHaveBeenCalled()
  })

  it('writes one group at a time on SQLite: the requests that come meanwhile wait and go as one', async () => {
    const { outbox, commits, enqueue, stored } = await setup()
    const real = Object.getPrototypeOf(outbox).enqueue.bind(outbox) as typeof outbox.enqueue
    let durable = () => {}
    const held = new Promise<void>((resolve) => {
      durable = resolve
    })
    // The first group is committed, and its flush of the WAL takes until `durable()`.
    enqueue.mockImplementationOnce(async (deliveries) => {
      const inserted = await real(deliveries)
      await held
      return inserted
    })
    const turn = () => new Promise((resolve) => setImmediate(resolve))
    const first = commits.commit([delivery('a1')])
    await waitFor(() => (enqueue.mock.calls.length === 1 ? true : undefined), 'the first group')
    const second = commits.commit([delivery('b1')])
    await turn()
    const third = commits.commit([delivery('c1')])
    await turn()
    await turn()
    expect(enqueue).toHaveBeenCalledTimes(1) // b1 and c1 wait for a1's group
    expect(stored()).toEqual(['a1'])
    durable()
    await Promise.all([first, second, third])
    expect(enqueue).toHaveBeenCalledTimes(2)
    expect(enqueue.mock.calls[1]![0].map((d) => d.messageId)).toEqual(['b1', 'c1'])
    expect(stored()).toEqual(['a1', 'b1', 'c1'])
  })

  it('flush() commits a waiting group at once (closing the relay)', async () => {
    const { commits, stored } = await setup()
    const waiting = commits.commit([delivery('a1')])
    commits.flush()
    expect(stored()).toEqual(['a1'])
    await waiting
  })
})

describe('ingest with group commit', () => {
  it('answers two concurrent batches from one transaction, each with its own answer', async () => {
    const { commits, enqueue, stored } = await setup()
    const [a, b] = await Promise.all([
      ingest(commits, source, [track('a1'), { type: 'track' }]),
      ingest(commits, source, [track('b1'), track('b2')]),
    ])
    expect(enqueue).toHaveBeenCalledTimes(1)
    expect(answerOf(a)).toEqual({
      success: true,
      accepted: 1,
      refused: [{ index: 1, reason: 'track needs userId or anonymousId' }],
    })
    expect(answerOf(b)).toEqual({ success: true, accepted: 2, refused: [] })
    expect(stored()).toEqual(['a1', 'b1', 'b2'])
  })

  it('refuses every batch of a failed group as store-unavailable (503), and stores nothing of any', async () => {
    const { commits, stored } = await setup()
    poison()
    const results = await Promise.allSettled([
      ingest(commits, source, [track('a1')]),
      ingest(commits, source, [track('poison')]),
    ])
    for (const result of results) {
      expect(result).toMatchObject({ status: 'rejected', reason: { kind: 'store-unavailable' } })
      expect((result as PromiseRejectedResult).reason).toBeInstanceOf(IngestError)
    }
    expect(stored()).toEqual([])
  })
})
