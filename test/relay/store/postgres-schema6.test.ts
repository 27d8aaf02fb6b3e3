import { afterEach, describe, expect, it } from 'vitest'
import { DAY_MS, makeDaysAhead, partitionName } from '../../../src/relay/store/postgres/partitions'
import type { PostgresPool } from '../../../src/relay/kit/postgres/pool'
import type { PostgresStore } from '../../../src/relay/store/postgres/postgres-store'
import type { NewDelivery } from '../../../src/relay/store/store'
import { openPostgresStoreWithPool } from '../fixtures/store'

// Schema 6 on PostgreSQL (docs/postgres.md): messages partitioned by day, retention by dropping a
// day whole. The guarantees the layout keeps, on a clock the test moves (the database's included).
const DAY0 = Date.parse('2026-03-01T10:00:00.000Z')
const DAY0_START = Date.parse('2026-03-01T00:00:00.000Z')

const delivery = (messageId: string, userId = 'ada'): NewDelivery => ({
  source: 'web',
  destination: 'Webhooks',
  messageId,
  type: 'track',
  json: JSON.stringify({ type: 'track', messageId, userId, event: 'Signed Up' }),
})

let opened: { store: PostgresStore; pool: PostgresPool } | undefined
afterEach(async () => {
  await opened?.store.close()
  opened = undefined
})

async function openAt(clock: { now: number }) {
  opened = await openPostgresStoreWithPool(() => clock.now)
  await makeDaysAhead(opened.pool, clock.now)
  return opened
}

// The partition a delivery's message is in.
async function partitionOf(pool: PostgresPool, id: number): Promise<string | undefined> {
  const { rows } = await pool.query<{ name: string }>(
    'SELECT tableoid::regclass::text AS name FROM messages WHERE id = $1',
    [id],
  )
  return rows[0]?.name
}

async function deliver(store: PostgresStore, at: number, outcome: 'delivered' | 'failed'): Promise<void> {
  const due = await store.claim({ source: 'web', limit: 1, owner: 'relay-a', leaseMs: 30_000 })
  await store.record(
    due.map((d) => ({
      id: d.id,
      at,
      requests: [{ url: 'https://hooks.example/', status: outcome === 'delivered' ? 200 : 410, ms: 3 }],
      next:
        outcome === 'delivered' ? { status: 'delivered' as const } : { status: 'failed' as const, error: 'HTTP 410' },
    })),
  )
}

describe('schema 6 on PostgreSQL', () => {
  it('writes each day into its own partition, and does not deliver a message id sent again a day later', async () => {
    const clock = { now: DAY0 }
    const { store, pool } = await openAt(clock)
    expect(await store.enqueue([delivery('m1')])).toBe(1)
    clock.now += DAY_MS
    expect(await store.enqueue([delivery('m1'), delivery('m2')])).toBe(1)

    const log = await store.listNewest({ limit: 10 })
    expect(log.map((d) => d.messageId)).toEqual(['m2', 'm1'])
    expect(await partitionOf(pool, log[1]!.id)).toBe(partitionName('messages', DAY0_START))
    expect(await partitionOf(pool, log[0]!.id)).toBe(partitionName('messages', DAY0_START + DAY_MS))
  })

  it('drops a day past retention whole, keeping the messages of its pending and dead deliveries', async () => {
    const clock = { now: DAY0 }
    const { store, pool } = await openAt(clock)
    await store.enqueue([delivery('delivered'), delivery('dead'), delivery('waiting')])
    await deliver(store, clock.now, 'delivered')
    await deliver(store, clock.now, 'failed')
    const [delivered, dead, waiting] = (await store.list({ after: 0, limit: 10 })).map((d) => d.id)

    // Three days later (a long outage: 'waiting' never got its turn), retention keeps a day.
    clock.now += 3 * DAY_MS
    const pruned = await store.prune(clock.now - DAY_MS, 1000)

    expect(pruned).toBe(1)
    const { rows } = await pool.query('SELECT 1 FROM pg_class WHERE relname = $1', [
      partitionName('messages', DAY0_START),
    ])
    expect(rows).toEqual([])
    expect(await store.get(delivered!)).toBeUndefined()
    // The dead letter keeps its message and its request, and can be retried and sent.
    const kept = await store.get(dead!)
    expect(kept).toMatchObject({ status: 'failed', messageId: 'dead' })
    expect(kept?.attempts.map((a) => a.status)).toEqual([410])
    expect(await partitionOf(pool, dead!)).toBe('messages_kept')
    expect(await store.retry(dead!)).toBe('retried')
    // Both are sent with their message, the one that waited first.
    const due = await store.claim({ source: 'web', limit: 10, owner: 'relay-a', leaseMs: 30_000 })
    expect(due.map((d) => [d.id, d.message.messageId])).toEqual([
      [waiting, 'waiting'],
      [dead, 'dead'],
    ])
    // And a message id the dropped day held is new again (its copy is gone with retention).
    expect(await store.enqueue([delivery('delivered'), delivery('waiting')])).toBe(1)
  })

  it('erases a user from every partition, the kept one included', async () => {
    const clock = { now: DAY0 }
    const { store, pool } = await openAt(clock)
    await store.enqueue([delivery('old-dead', 'ada')])
    await deliver(store, clock.now, 'failed')
    clock.now += 2 * DAY_MS
    // The first day is dropped: its dead letter moves to the kept partition.
    await store.prune(clock.now - DAY_MS, 1000)
    await makeDaysAhead(pool, clock.now)
    await store.enqueue([delivery('today', 'ada'), delivery('other', 'grace')])
    await deliver(store, clock.now, 'delivered')
    clock.now += DAY_MS
    await store.enqueue([delivery('tomorrow', 'ada')])

    const partitions = await pool.query<{ name: string }>(
      "SELECT DISTINCT tableoid::regclass::text AS name FROM messages WHERE user_id = 'ada' ORDER BY 1",
    )
    expect(partitions.rows.length).toBe(3)

    expect(await store.replays.eraseUser('ada')).toBe(3)
    const left = await pool.query<{ message_id: string; message: string }>(
      "SELECT message_id, message FROM messages WHERE message LIKE '%ada%' OR user_id = 'ada' ORDER BY id",
    )
    // Only the pending one keeps its message until it is sent (docs/replay.md, erasure).
    expect(left.rows.map((r) => r.message_id)).toEqual(['tomorrow'])
    expect((await store.listNewest({ userId: 'grace', limit: 10 })).map((d) => d.messageId)).toEqual(['other'])
  })

  it('leaves a day whose rows are in the kept partition already there, and makes the days after it', async () => {
    const clock = { now: DAY0 }
    const { store, pool } = await openAt(clock)
    // Written while no relay had made the day (as an upgrade's rows are): they are in the kept partition.
    const later = DAY0 + 10 * DAY_MS
    clock.now = later
    expect(await store.enqueue([delivery('early')])).toBe(1)
    await makeDaysAhead(pool, later)
    await makeDaysAhead(pool, later)

    const made = async (day: number) =>
      (await pool.query('SELECT 1 FROM pg_class WHERE relname = $1', [partitionName('messages', day)])).rows.length
    expect(await made(DAY0_START + 10 * DAY_MS)).toBe(0)
    expect(await made(DAY0_START + 11 * DAY_MS)).toBe(1)
    const [early] = await store.listNewest({ limit: 1 })
    expect(await partitionOf(pool, early!.id)).toBe('messages_kept')
  })
})
