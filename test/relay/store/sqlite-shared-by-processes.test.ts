import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { openSqliteStore } from '../../../src/relay/store/sqlite/sqlite-store'

// One SQLite file opened by several processes (`tracklet relay --workers N`): a store opened as
// shared leaves the others' leases alone; one opened alone takes the leases as its previous run's.

const dir = mkdtempSync(join(tmpdir(), 'tracklet-sqlite-shared-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const NOW = 1_000_000
const delivery = { source: 'web', destination: 'Webhooks', messageId: 'm-1', type: 'track', json: '{"type":"track"}' }
const claim = (owner: string) => ({ source: 'web', limit: 10, owner, leaseMs: 30_000 })

describe('a SQLite store opened by several processes', () => {
  it.each([
    [true, 0],
    [false, 1],
  ])('sharedByProcesses %s: another opener can claim %i delivery held by the first', async (shared, claimed) => {
    const path = join(dir, `shared-${shared}.db`)
    const first = await openSqliteStore(path, () => NOW)
    await first.enqueue([delivery])
    expect(await first.claim(claim('worker-1'))).toHaveLength(1)

    const second = await openSqliteStore(path, () => NOW, { sharedByProcesses: shared })
    expect(await second.claim(claim('worker-2'))).toHaveLength(claimed)
    await first.close()
    await second.close()
  })
})
