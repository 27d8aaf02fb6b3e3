import { afterEach, describe, expect, it } from 'vitest'
import type { Relay } from '../../../src/relay/index'
import { RetentionSweeper } from '../../../src/relay/store/retention'
import type { NewDelivery, Store } from '../../../src/relay/store/store'
import { STORE_KINDS, type StoreKind } from '../../support/stores'
import { openPostgresStoreWithPool, openSqliteStoreWithDb } from '../fixtures/store'
import { adminGet, post, type Receiver, startReceiver, startRelay, track, waitFor } from '../helpers'

const T0 = Date.parse('2026-01-01T00:00:00.000Z')
const opened: Store[] = []
let relay: Relay | undefined
let receiver: Receiver | undefined
afterEach(async () => {
  await relay?.close()
  await receiver?.close()
  relay = receiver = undefined
  for (const store of opened.splice(0)) await store.close()
})

const delivery = (messageId: string): NewDelivery => ({
  source: 'web',
  destination: 'Webhooks',
  messageId,
  type: 'track',
  json: JSON.stringify({ type: 'track', userId: 'u', event: 'E', messageId, properties: { pad: 'x'.repeat(500) } }),
})

// A store of `kind`, and the space its outbox takes on disk: pages after a checkpoint (SQLite), or
// the tables with their indexes after a vacuum makes dead rows' space reusable, as autovacuum does
// (PostgreSQL).
async function openMeasured(kind: StoreKind, now: () => number): Promise<{ store: Store; bytes(): Promise<number> }> {
  if (kind === 'postgres') {
    const { store, pool } = await openPostgresStoreWithPool(now)
    const bytes = async () => {
      // Schema 6's tables, the partitions of messages and outcomes included (docs/postgres.md).
      // Their rows, not their indexes: an index ordered by id keeps a page for each round's one
      // dead letter (a B-tree page is freed only when empty), one page a round in each, as schema 5's
      // primary key did, hidden there by its wide rows; the rows' space is what retention frees.
      await pool.query('VACUUM messages, queue, outcomes, attempts')
      const { rows } = await pool.query<{ bytes: number }>(
        `SELECT sum(pg_table_size(relid))::bigint AS bytes FROM (
           SELECT relid FROM pg_partition_tree('messages') UNION ALL SELECT relid FROM pg_partition_tree('outcomes')
           UNION ALL VALUES ('queue'::regclass), ('attempts'::regclass)) tables`,
      )
      return rows[0]!.bytes
    }
    return { store, bytes }
  }
  const { store, db } = await openSqliteStoreWithDb(':memory:', now)
  const bytes = async () => {
    db.pragma('wal_checkpoint(TRUNCATE)')
    return (db.pragma('page_count', { simple: true }) as number) * (db.pragma('page_size', { simple: true }) as number)
  }
  return { store, bytes }
}

async function count(store: Store, status: string): Promise<number> {
  return (await store.list({ after: 0, limit: 100_000, status: status as 'delivered' })).length
}

describe.each(STORE_KINDS)('retention on the %s store', (kind: StoreKind) => {
  it('keeps the database the same size under steady traffic, keeping every dead-lettered delivery', async () => {
    let now = T0
    const { store, bytes } = await openMeasured(kind, () => now)
    opened.push(store)
    const sweeper = new RetentionSweeper(store, 2000, () => now)
    const sizes: number[] = []
    const delivered: number[] = []
    // 12 rounds, a second apart, of 300 messages each: delivered, except one dead-lettered per round.
    for (let round = 0; round < 12; round++) {
      now = T0 + round * 1000
      await store.enqueue(Array.from({ length: 300 }, (_, i) => delivery(`r${round}-${i}`)))
      const due = await store.claim({ source: 'web', limit: 1000, owner: 'me', leaseMs: 30_000 })
      await store.record(
        due.map((d, i) => ({
          id: d.id,
          at: now,
          requests: [{ url: 'https://a.example/hook', status: i === 0 ? 410 : 200, ms: 2 }],
          next: i === 0 ? { status: 'failed' as const, error: 'HTTP 410' } : { status: 'delivered' as const },
        })),
      )
      await sweeper.sweep()
      delivered.push(await count(store, 'delivered'))
      sizes.push(await bytes())
    }
    // Only the last rounds' delivered deliveries are kept (those within 2 s of the last sweep)...
    expect(delivered.slice(3)).toEqual(Array(9).fill(3 * 299))
    // ...every dead-lettered one stays...
    expect(await count(store, 'failed')).toBe(12)
    // ...and after the first rounds the database stops growing: space freed is used again. (Without
    // retention the last size would be about twice the size after round 6.)
    expect(sizes[11]!).toBeLessThanOrEqual(sizes[5]! * 1.1)
  })

  it('deletes delivered deliveries from the log after `retention`, keeping dead-lettered ones', async () => {
    receiver = await startReceiver()
    const answers = receiver
    // The message `dead` is refused for good (410): it is dead-lettered.
    receiver.respond((_req, res) =>
      res.writeHead(answers.received.at(-1)?.body['messageId'] === 'dead' ? 410 : 200).end(),
    )
    relay = await startRelay(receiver.url, { retention: 1000 }, kind)
    await post(`${relay.url}/v1/batch`, { batch: [track({ messageId: 'ok' }), track({ messageId: 'dead' })] })
    await waitFor(async () => {
      const { body } = await adminGet(`${relay!.url}/v1/deliveries`)
      const statuses = body.deliveries.map((d: { messageId: string; status: string }) => `${d.messageId}:${d.status}`)
      return statuses.join() === 'dead:failed,ok:delivered' ? true : undefined // newest first
    }, 'one delivered and one dead-lettered')
    const log = await waitFor(async () => {
      const { body } = await adminGet(`${relay!.url}/v1/deliveries`)
      return body.deliveries.length === 1 ? body.deliveries : undefined
    }, 'retention to delete the delivered one')
    expect(log.map((d: { messageId: string }) => d.messageId)).toEqual(['dead'])
  })

  it("deletes the alerts' claims of endpoints that owe no notice, once older than `retention`", async () => {
    let now = T0
    const { store, rows } = await withClaimRows(kind, () => now)
    const sweeper = new RetentionSweeper(store, 2000, () => now)
    // One endpoint's notice went out; another's second dead letter waits for the next notice.
    await store.alertClaims.deadLettered('https://a.example/quiet', now, 60_000)
    await store.alertClaims.deadLettered('https://b.example/owed', now, 60_000)
    await store.alertClaims.deadLettered('https://b.example/owed', now + 1, 60_000)
    now = T0 + 60_000 + 1000 // the next notices are due, within the retention
    await sweeper.sweep()
    expect(await rows()).toEqual(['https://a.example/quiet', 'https://b.example/owed'])
    now = T0 + 60_000 + 5000 // past it: the quiet one goes; the owed one waits for its flush
    await sweeper.sweep()
    expect(await rows()).toEqual(['https://b.example/owed'])
    await store.alertClaims.flush('https://b.example/owed', now, 60_000)
    now += 60_000 + 5000
    await sweeper.sweep()
    expect(await rows()).toEqual([])
  })
})

// A store of `kind`, and the URLs of its alert_claims rows.
async function withClaimRows(kind: StoreKind, now: () => number): Promise<{ store: Store; rows(): Promise<string[]> }> {
  const query = 'SELECT url FROM alert_claims ORDER BY url'
  if (kind === 'postgres') {
    const { store, pool } = await openPostgresStoreWithPool(now)
    opened.push(store)
    return { store, rows: async () => (await pool.query<{ url: string }>(query)).rows.map((r) => r.url) }
  }
  const { store, db } = await openSqliteStoreWithDb(':memory:', now)
  opened.push(store)
  return { store, rows: async () => (db.prepare(query).all() as { url: string }[]).map((r) => r.url) }
}
