import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { SourceRegistry } from '../../../src/relay/sources/source-registry'
import { validateRelayOptions } from '../../../src/relay/config/validate'
import { GroupCommit } from '../../../src/relay/ingest/group-commit'
import { ingest } from '../../../src/relay/ingest/ingest'
import { planCheck } from '../../../src/relay/features/plans/plan-check'
import { addLogSink, type LogEvent } from '../../../src/relay/log'
import { RelayEvents } from '../../../src/relay/events/channel'
import { watchWrites } from '../../../src/relay/events/watched-store'
import type { SqliteDatabase } from '../../../src/relay/store/sqlite/schema'
import type { SqliteStore } from '../../../src/relay/store/sqlite/sqlite-store'
import type { NewDelivery } from '../../../src/relay/store/store'
import type { NewViolation } from '../../../src/relay/store/violations'
import { openSqliteStoreWithDb } from '../fixtures/store'

// A plan whose revenue must be a number; `violations` decides what becomes of one that is not.
function sourceWith(violations: 'allow' | 'block') {
  const plan = {
    events: { 'Order Completed': { properties: { type: 'object', properties: { revenue: { type: 'number' } } } } },
  }
  const options = validateRelayOptions({
    sources: [
      {
        name: 'web',
        writeKey: 'k',
        destinations: { Webhooks: { webhooks: [{ url: 'https://example.com/hook' }] } },
        schema: { plan, violations },
      },
    ],
  })
  return new SourceRegistry(options.sources).routed()[0]!
}
const order = (id: string, revenue: unknown) => ({
  type: 'track',
  userId: 'u',
  event: 'Order Completed',
  messageId: id,
  properties: { revenue },
})

let store: SqliteStore
let db: SqliteDatabase
let logged: LogEvent[]
let removeSink: () => void
beforeEach(async () => {
  ;({ store, db } = await openSqliteStoreWithDb())
  logged = []
  removeSink = addLogSink((event) => logged.push(event))
})
afterEach(() => {
  removeSink()
  db.close()
})

const stored = () => db.prepare('SELECT message_id FROM deliveries ORDER BY id').pluck().all()
const recorded = () => db.prepare('SELECT message_id FROM violations ORDER BY id').pluck().all()

describe('violations committed with the deliveries (SQLite)', () => {
  it('writes the violations of concurrent requests in their deliveries’ one transaction', async () => {
    const both = vi.spyOn(store, 'enqueueWithViolations')
    const record = vi.spyOn(store.violations, 'record')
    const commits = new GroupCommit(store)
    const check = planCheck()
    const [a, b] = await Promise.all([
      ingest(commits, sourceWith('allow'), [order('a1', 'ten'), order('a2', 10)], {}, check),
      ingest(commits, sourceWith('block'), [order('b1', 'ten')], {}, check),
    ])
    expect([a.accepted, b.accepted, b.filtered]).toEqual([2, 1, 1])
    expect(both).toHaveBeenCalledTimes(1)
    expect(record).not.toHaveBeenCalled()
    expect(stored()).toEqual(['a1', 'a2'])
    // The blocked message writes no delivery, and is recorded all the same.
    expect(recorded()).toEqual(['a1', 'b1'])
  })

  it('writes them so through the store as the relay hands it to ingest (its writes watched)', async () => {
    const both = vi.spyOn(store, 'enqueueWithViolations')
    const record = vi.spyOn(store.violations, 'record')
    const commits = new GroupCommit(watchWrites(store, new RelayEvents()))
    await ingest(commits, sourceWith('allow'), [order('a1', 'ten')], {}, planCheck())
    expect(both).toHaveBeenCalledTimes(1)
    expect(record).not.toHaveBeenCalled()
    expect(recorded()).toEqual(['a1'])
  })

  it('records nothing of a request whose deliveries were not committed', async () => {
    db.exec(`CREATE TRIGGER fail_poison BEFORE INSERT ON deliveries WHEN NEW.message_id = 'poison'
             BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END`)
    const outcome = ingest(new GroupCommit(store), sourceWith('allow'), [order('poison', 'ten')], {}, planCheck())
    await expect(outcome).rejects.toMatchObject({ kind: 'store-unavailable' })
    expect(recorded()).toEqual([])
  })

  it('keeps the messages when the violations’ insert fails, and logs how many went unrecorded', async () => {
    db.exec(`CREATE TRIGGER fail_violations BEFORE INSERT ON violations
             BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END`)
    const commits = new GroupCommit(store)
    const outcome = await ingest(commits, sourceWith('allow'), [order('a1', 'ten'), order('a2', 'x')], {}, planCheck())
    expect(outcome.accepted).toBe(2)
    expect(stored()).toEqual(['a1', 'a2'])
    expect(recorded()).toEqual([])
    expect(logged).toContainEqual(
      expect.objectContaining({
        level: 'error',
        fields: expect.objectContaining({ event: 'violations-unrecorded', count: 2 }),
      }),
    )
  })
})

describe('violations after the deliveries (a store whose enqueue does not take them)', () => {
  const violation = (messageId: string): NewViolation => ({
    at: '2026-03-01T10:00:00.000Z',
    source: 'web',
    messageId,
    type: 'track',
    kind: 'type',
    path: '/properties/revenue',
    message: 'must be number',
  })
  const delivery = (messageId: string): NewDelivery => ({
    source: 'web',
    destination: 'Webhooks',
    messageId,
    type: 'track',
    json: '{}',
  })

  it('writes them in the same group, right after its deliveries, in one call', async () => {
    const calls: string[] = []
    const commits = new GroupCommit({
      enqueue: async (deliveries) => {
        calls.push(`enqueue ${deliveries.map((d) => d.messageId).join(' ')}`)
        return deliveries.length
      },
      violations: {
        record: async (violations) => {
          calls.push(`record ${violations.map((v) => v.messageId).join(' ')}`)
        },
      },
    })
    await Promise.all([commits.commit([delivery('a1')], [violation('a1')]), commits.commit([], [violation('b1')])])
    expect(calls).toEqual(['enqueue a1', 'record a1 b1'])
  })

  it('answers the requests when that write fails, and logs how many went unrecorded', async () => {
    const commits = new GroupCommit({
      enqueue: async (deliveries) => deliveries.length,
      violations: {
        record: async () => {
          throw new Error('the database is unavailable')
        },
      },
    })
    await commits.commit([delivery('a1')], [violation('a1')])
    expect(logged).toContainEqual(
      expect.objectContaining({ fields: expect.objectContaining({ event: 'violations-unrecorded', count: 1 }) }),
    )
  })
})
