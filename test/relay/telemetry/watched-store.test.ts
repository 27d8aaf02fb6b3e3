import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { StoreHealth } from '../../../src/relay/telemetry/health'
import { RelayEvents } from '../../../src/relay/events/channel'
import { watchWrites } from '../../../src/relay/events/watched-store'
import { judgeWrites, probeWrite } from '../../../src/relay/telemetry/health-probe'
import type { StoreHealth as Health } from '../../../src/relay/telemetry/health'
import type { Store } from '../../../src/relay/store/store'

/** `store` watched as the relay watches it: its writes' events heard by `health`. */
function watched(store: Store, health: Health): Store {
  const events = new RelayEvents()
  events.subscribe(judgeWrites(health))
  return watchWrites(store, events)
}
import { openSqliteStore } from '../../../src/relay/store/sqlite/sqlite-store'

describe('watchWrites', () => {
  async function setup(error: Error) {
    const store = await openSqliteStore(':memory:')
    vi.spyOn(store, 'enqueue').mockRejectedValue(error)
    const health = new StoreHealth({ probe: async () => {} })
    const close = async (): Promise<void> => {
      health.stop()
      await store.close()
    }
    return { store: watched(store, health), health, close }
  }

  it('does not count data the store refused against health: the store still takes other writes', async () => {
    const refused = Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: '22021' })
    const { store, health, close } = await setup(refused)
    await expect(store.enqueue([])).rejects.toBe(refused)
    expect(health.report()).toEqual({ ok: true })
    await close()
  })

  it("does not count an argument the store refuses (a TypeError, such as a cursor it never gave): the admin API's rule too", async () => {
    const refused = new TypeError('not a cursor this store gave')
    const { store, health, close } = await setup(refused)
    await expect(store.enqueue([])).rejects.toBe(refused)
    expect(health.report()).toEqual({ ok: true })
    await close()
  })

  it('counts a connection or disk failure', async () => {
    const down = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })
    const { store, health, close } = await setup(down)
    await expect(store.enqueue([])).rejects.toBe(down)
    expect(health.report()).toMatchObject({ ok: false, failing: [{ writes: 'deliveries' }] })
    await close()
  })
})

describe('the health probe', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('is never a write smaller than the ingest write that failed: a nearly full disk keeps /healthz 503', async () => {
    vi.useFakeTimers()
    const dir = mkdtempSync(join(tmpdir(), 'tracklet-probe-'))
    const file = join(dir, 'relay.db')
    const store = await openSqliteStore(file)
    // A second connection to the file: 2,000 bytes of room, each table refusing what would take
    // more, as a nearly full disk refuses a large write while a small one still fits.
    const side = new Database(file)
    const FULL = `RAISE(ABORT, 'database or disk is full')`
    side.exec(`CREATE TRIGGER full_deliveries BEFORE INSERT ON deliveries WHEN length(NEW.message) > 2000
               BEGIN SELECT ${FULL}; END`)
    side.exec(`CREATE TRIGGER full_members BEFORE INSERT ON audience_members
               WHEN (SELECT total(length(user_id)) FROM audience_members) + length(NEW.user_id) > 2000
               BEGIN SELECT ${FULL}; END`)
    const health = new StoreHealth({ probe: (bytes) => probeWrite(store, bytes) })
    const watchedStore = watched(store, health)
    const json = JSON.stringify({ type: 'track', userId: 'u1', event: 'E', notes: 'x'.repeat(5000) })
    const big = { source: 'web', destination: 'Webhooks', messageId: 'm1', type: 'track', json }
    try {
      await expect(watchedStore.enqueue([big])).rejects.toThrow('database or disk is full')
      await vi.advanceTimersByTimeAsync(5000) // several probes, each failing like the ingest write
      expect(health.report()).toMatchObject({ ok: false, failing: [{ writes: 'deliveries' }] })

      side.exec('DROP TRIGGER full_deliveries; DROP TRIGGER full_members')
      await vi.advanceTimersByTimeAsync(10_000)
      expect(health.report()).toEqual({ ok: true })
      // The probe leaves nothing behind.
      expect(side.prepare('SELECT count(*) FROM audience_members').pluck().get()).toBe(0)
      await watchedStore.enqueue([big])
    } finally {
      health.stop()
      side.close()
      await store.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
