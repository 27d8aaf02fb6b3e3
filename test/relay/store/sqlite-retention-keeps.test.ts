import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { RetentionSweeper } from '../../../src/relay/store/retention'
import type { SqliteStore } from '../../../src/relay/store/sqlite/sqlite-store'
import type { NewDelivery } from '../../../src/relay/store/store'
import { openSqliteStoreWithDb } from '../fixtures/store'

// Retention's guarantee on SQLite (docs/sqlite.md): it deletes settled deliveries by the time they
// settled, a chunk at a time; a delivery still pending (a paused endpoint, a long outage) or dead
// keeps its message however old, until it settles and then outlives `retention` in turn.
const T0 = Date.parse('2026-01-01T00:00:00.000Z')
const DAY = 86_400_000
const RETENTION = 7 * DAY

const message = (messageId: string) => ({
  type: 'track',
  messageId,
  userId: 'u1',
  event: 'Order Completed',
  properties: { orderId: `o-${messageId}`, revenue: 9.99 },
})
const delivery = (messageId: string): NewDelivery => ({
  source: 'web',
  destination: 'Webhooks',
  messageId,
  type: 'track',
  json: JSON.stringify(message(messageId)),
})
const request = (status: number) => ({ url: 'https://hooks.example/a', status, ms: 4 })

let dir: string | undefined
let store: SqliteStore | undefined
afterEach(async () => {
  await store?.close()
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  store = dir = undefined
})

async function byMessageId(
  s: SqliteStore,
): Promise<Map<string, { status: string; message: unknown; attempts: number }>> {
  const rows = await s.list({ after: 0, limit: 1000 })
  return new Map(rows.map((r) => [r.messageId, { status: r.status, message: r.message, attempts: r.attempts.length }]))
}

describe('retention on the SQLite store', () => {
  it('keeps pending and dead deliveries with their message however old, and prunes them once settled and past retention', async () => {
    dir = mkdtempSync(join(tmpdir(), 'tracklet-retention-keeps-'))
    let now = T0
    ;({ store } = await openSqliteStoreWithDb(join(dir, 'relay.db'), () => now))
    const ids = ['waiting', 'retrying', 'dead', 'delivered', 'filtered']
    expect(await store.enqueue(ids.map(delivery))).toBe(5)
    const claimed = await store.claim({ source: 'web', limit: 10, owner: 'w1', leaseMs: 30_000 })
    const idOf = (messageId: string) => claimed.find((d) => d.message.messageId === messageId)!.id
    // `waiting` is never attempted (its endpoint paused): its lease is given back, untouched.
    await store.release('w1', [idOf('waiting')])
    await store.record([
      // A long outage: the next try is set far out.
      {
        id: idOf('retrying'),
        at: T0,
        requests: [request(503)],
        next: { status: 'pending', nextAttemptAt: T0 + 500 * DAY, error: 'HTTP 503' },
      },
      { id: idOf('dead'), at: T0, requests: [request(410)], next: { status: 'failed', error: 'HTTP 410' } },
      { id: idOf('delivered'), at: T0, requests: [request(200)], next: { status: 'delivered' } },
      { id: idOf('filtered'), at: T0, requests: [], next: { status: 'filtered', error: 'dropped by the function' } },
    ])

    // 400 days on: far past retention for all of them.
    now = T0 + 400 * DAY
    const sweeper = new RetentionSweeper(store, RETENTION, () => now)
    expect(await sweeper.sweep()).toBe(2)
    let kept = await byMessageId(store)
    expect([...kept.keys()].sort()).toEqual(['dead', 'retrying', 'waiting'])
    for (const id of ['dead', 'retrying', 'waiting']) expect(kept.get(id)!.message).toEqual(message(id))
    expect(kept.get('retrying')).toMatchObject({ status: 'pending', attempts: 1 })
    expect(kept.get('dead')).toMatchObject({ status: 'failed', attempts: 1 })

    // The waiting one is still claimable, message and all; once delivered it is kept for `retention`
    // from then, not from when it was written.
    const [waiting] = await store.claim({ source: 'web', limit: 10, owner: 'w2', leaseMs: 30_000 })
    expect(waiting!.message).toEqual(message('waiting'))
    await store.record([{ id: waiting!.id, at: now, requests: [request(200)], next: { status: 'delivered' } }])
    now += RETENTION - 1000
    expect(await sweeper.sweep()).toBe(0)
    expect((await byMessageId(store)).get('waiting')).toMatchObject({
      status: 'delivered',
      message: message('waiting'),
    })
    now += 2000
    expect(await sweeper.sweep()).toBe(1)

    // The dead letter, retried after 400 days, is sent with its message.
    expect(await store.retry(idOf('dead'))).toBe('retried')
    const [retried] = await store.claim({ source: 'web', limit: 10, owner: 'w3', leaseMs: 30_000 })
    expect(retried!.message).toEqual(message('dead'))
    kept = await byMessageId(store)
    expect([...kept.keys()].sort()).toEqual(['dead', 'retrying'])
  })
})
