import { afterEach, describe, expect, it } from 'vitest'
import type { PostgresPool } from '../../../src/relay/kit/postgres/pool'
import { DAY_MS, makeDaysAhead } from '../../../src/relay/store/postgres/partitions'
import type { PostgresStore } from '../../../src/relay/store/postgres/postgres-store'
import type { AttemptOutcome } from '../../../src/relay/store/store'
import { testDelivery } from '../fixtures/deliveries'
import { openPostgresStoreWithPool } from '../fixtures/store'

// A delivery delivered at its first attempt writes no outcome row on PostgreSQL (docs/postgres.md,
// "A delivery delivered at once"): the delivery log still shows it delivered, with its request and
// its time; every other settled delivery keeps its row.
const DAY0 = Date.parse('2026-03-01T10:00:00.000Z')

const answered = (id: number, at: number, status: number, next: AttemptOutcome['next']): AttemptOutcome => ({
  id,
  at,
  requests: [{ url: 'https://hooks.example/', status, ms: 40 }],
  next,
})

let opened: { store: PostgresStore; pool: PostgresPool } | undefined
afterEach(async () => {
  await opened?.store.close()
  opened = undefined
})

async function openAt(clock: { now: number }, daysMade = true) {
  opened = await openPostgresStoreWithPool(() => clock.now)
  if (daysMade) await makeDaysAhead(opened.pool, clock.now)
  return opened
}

async function claimAll(store: PostgresStore) {
  return store.claim({ source: 'web', limit: 10, owner: 'relay-a', leaseMs: 30_000 })
}

// The outcome rows, by message id.
async function outcomeRows(pool: PostgresPool): Promise<Record<string, number>> {
  const { rows } = await pool.query<{ message_id: string; attempts: number }>(
    `SELECT m.message_id, o.attempts FROM outcomes o JOIN messages m ON m.id = o.id AND m.created_at = o.created_at
     ORDER BY 1`,
  )
  return Object.fromEntries(rows.map((r) => [r.message_id, r.attempts]))
}

describe('a delivery delivered at its first attempt, on PostgreSQL', () => {
  it('writes no outcome row, and reads as delivered at its attempt, found by status', async () => {
    const clock = { now: DAY0 }
    const { store, pool } = await openAt(clock)
    await store.enqueue([
      testDelivery('at-once'),
      testDelivery('retried'),
      testDelivery('dropped'),
      testDelivery('again'),
    ])
    const [atOnce, retried, dropped, again] = await claimAll(store)
    clock.now += 1000
    await store.record([
      answered(atOnce!.id, DAY0 + 500, 200, { status: 'delivered' }),
      answered(retried!.id, DAY0 + 500, 503, { status: 'pending', nextAttemptAt: DAY0 + 1500, error: 'HTTP 503' }),
      { id: dropped!.id, at: DAY0 + 500, requests: [], next: { status: 'filtered', error: 'dropped by its function' } },
      answered(again!.id, DAY0 + 500, 200, { status: 'delivered' }),
    ])
    clock.now += 1000
    const [retry] = await claimAll(store)
    await store.record([answered(retry!.id, DAY0 + 2000, 200, { status: 'delivered' })])
    // A relay whose lease ran out sends it again and records it: its request is logged, no more.
    await store.record([answered(again!.id, DAY0 + 2500, 200, { status: 'delivered' })])

    expect(await outcomeRows(pool)).toEqual({ dropped: 1, retried: 2 })
    const shown = await store.get(atOnce!.id)
    expect(shown).toMatchObject({ status: 'delivered', lastError: null, updatedAt: new Date(DAY0 + 500).toISOString() })
    expect(shown!.attempts).toMatchObject([{ status: 200, at: new Date(DAY0 + 500).toISOString() }])
    expect((await store.get(again!.id))!.attempts.map((a) => a.at)).toEqual(
      [DAY0 + 500, DAY0 + 2500].map((t) => new Date(t).toISOString()),
    )
    const delivered = await store.listNewest({ status: 'delivered', limit: 10 })
    expect(delivered.map((d) => d.messageId).sort()).toEqual(['again', 'at-once', 'retried'])
    const { rows } = await pool.query<{ attempts: number; first_attempt_at: string }>(
      'SELECT attempts, first_attempt_at FROM deliveries WHERE id = $1',
      [atOnce!.id],
    )
    expect(rows).toEqual([{ attempts: 1, first_attempt_at: DAY0 + 500 }])
  })

  it('reads a dead letter retried by hand and then delivered at once at that attempt', async () => {
    const clock = { now: DAY0 }
    const { store, pool } = await openAt(clock)
    await store.enqueue([testDelivery('dead')])
    const [dead] = await claimAll(store)
    await store.record([answered(dead!.id, DAY0 + 100, 410, { status: 'failed', error: 'HTTP 410' })])
    clock.now = DAY0 + 60_000
    expect(await store.retry(dead!.id)).toBe('retried')
    const [again] = await claimAll(store)
    await store.record([answered(again!.id, DAY0 + 60_500, 200, { status: 'delivered' })])
    expect(await outcomeRows(pool)).toEqual({})
    const shown = await store.get(dead!.id)
    expect(shown).toMatchObject({ status: 'delivered', updatedAt: new Date(DAY0 + 60_500).toISOString() })
    expect(shown!.attempts.map((a) => a.status)).toEqual([410, 200])
    // Retention ages it by that attempt, not by the first request of its earlier window.
    expect(await store.prune(DAY0 + 60_000, 100)).toBe(0)
    expect(await store.prune(DAY0 + 60_501, 100)).toBe(1)
  })

  it('keeps its outcome row in the kept partition, which retention prunes by that row', async () => {
    const clock = { now: DAY0 }
    const { store, pool } = await openAt(clock, false)
    await store.enqueue([testDelivery('kept')])
    const [kept] = await claimAll(store)
    await store.record([answered(kept!.id, DAY0, 200, { status: 'delivered' })])
    expect(await outcomeRows(pool)).toEqual({ kept: 1 })
  })

  it('is pruned by its attempt’s time, with its request, and can be put back by hand', async () => {
    const clock = { now: DAY0 }
    const { store, pool } = await openAt(clock)
    await store.enqueue([testDelivery('early'), testDelivery('late'), testDelivery('back')])
    const [early, late, back] = await claimAll(store)
    await store.record([
      answered(early!.id, DAY0 + 100, 200, { status: 'delivered' }),
      answered(late!.id, DAY0 + 60_000, 200, { status: 'delivered' }),
      answered(back!.id, DAY0 + 100, 200, { status: 'delivered' }),
    ])
    // An operator puts 'back' in the queue again through the view (a tool's update).
    await pool.query("UPDATE deliveries SET status = 'pending', next_attempt_at = $2 WHERE id = $1", [back!.id, DAY0])
    clock.now = DAY0 + 30_000
    expect(await store.prune(DAY0 + 30_000, 100)).toBe(1)
    const left = await store.list({ after: 0, limit: 10 })
    expect(left.map((d) => [d.messageId, d.status])).toEqual([
      ['late', 'delivered'],
      ['back', 'pending'],
    ])
    const { rows } = await pool.query('SELECT 1 FROM attempts WHERE delivery_id = $1', [early!.id])
    expect(rows).toEqual([])
    // A day later its day goes whole, as every delivery's.
    clock.now = DAY0 + 2 * DAY_MS
    expect(await store.prune(clock.now - DAY_MS, 100)).toBe(1)
  })
})
