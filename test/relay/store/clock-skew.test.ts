import { request } from 'undici'
import { afterEach, describe, expect, it } from 'vitest'
import { createRelay } from '../../../src/relay/index'
import type { SendsOne as Destination } from '../../../src/relay/destinations/webhooks/sender'
import type { Worker } from '../../../src/relay/delivery/worker'
import { openPostgresStore } from '../../../src/relay/store/postgres/postgres-store'
import type { Store } from '../../../src/relay/store/store'
import { freshPostgresDatabase, sql } from '../../support/postgres'
import { type HttpReceiver, startHttpReceiver } from '../../support/http-receiver'
import { waitFor } from '../../support/wait-for'
import { testDelivery } from '../fixtures/deliveries'
import { testWorker } from '../fixtures/worker'
import { parseExposition, sampleValue } from '../telemetry/prometheus'

// Two relays on one PostgreSQL database, one of them with its clock 40 s off, a 5 s lease (well
// under the skew) and many deliveries to a counting receiver: leases and due times are judged by
// the database's clock, so neither relay takes work the other still holds. (PostgreSQL only: a
// SQLite file serves one relay, on one machine's clock.)

const MESSAGES = 600
const LEASE_TIMEOUT = 5000
const SKEW_MS = 40_000

const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** A destination that POSTs each message to the receiver and reports a success once it answers; counts its sends. */
function postingTo(receiver: HttpReceiver): Destination & { sent: number } {
  const url = `${receiver.origin}/hook`
  return {
    sent: 0,
    async send(message) {
      this.sent++
      const started = performance.now()
      const response = await fetch(url, { method: 'POST', body: JSON.stringify(message) })
      await response.arrayBuffer()
      const ms = performance.now() - started
      return { ok: true, retryable: false, attempts: [{ url, status: response.status, ms }] }
    },
  }
}

/** A promise and the function that resolves it (Promise.withResolvers, which Node 20 lacks). */
function settleable(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void
  const promise = new Promise<void>((done) => (resolve = done))
  return { promise, resolve }
}

async function relayOn(database: string, receiver: HttpReceiver, owner: string, now: () => number) {
  const store: Store = await openPostgresStore(database, { now })
  const destination = postingTo(receiver)
  const worker: Worker = testWorker({
    store,
    destination,
    owner,
    now,
    leaseTimeout: LEASE_TIMEOUT,
    concurrency: 8,
  })
  cleanups.push(async () => {
    await worker.stop(1000)
    await store.close()
  })
  return { store, worker, destination }
}

describe.each([SKEW_MS, -SKEW_MS])('two relays on one PostgreSQL, one with its clock off by %i ms', (skew) => {
  it('deliver every message once: no lease is taken while its holder still holds it', async () => {
    const database = await freshPostgresDatabase()
    // Each message's arrivals, counted as they come; `arrived` resolves once every message has come.
    const counts = new Map<string, number>()
    const { promise: arrived, resolve: allArrived } = settleable()
    // Answered a little later, so each relay holds claimed deliveries (in flight and buffered)
    // while the other claims.
    const receiver = await startHttpReceiver((_req, res, request) => {
      const { messageId } = JSON.parse(request.body.toString('utf8')) as { messageId: string }
      counts.set(messageId, (counts.get(messageId) ?? 0) + 1)
      if (counts.size === MESSAGES) allArrived()
      setTimeout(() => res.writeHead(200).end('{}'), 5)
    })
    cleanups.push(() => receiver.close())
    const right = await relayOn(database, receiver, 'relay-right', Date.now)
    const skewed = await relayOn(database, receiver, 'relay-skewed', () => Date.now() + skew)

    // Each relay takes in half the traffic (as behind a load balancer), on its own clock.
    const deliveries = Array.from({ length: MESSAGES }, (_, i) => testDelivery(`m${i}`))
    await right.store.enqueue(deliveries.slice(0, MESSAGES / 2))
    await skewed.store.enqueue(deliveries.slice(MESSAGES / 2))
    right.worker.wake()
    skewed.worker.wake()
    // Waits for what happens, not for a fixed time: 600 deliveries through two relays are work for
    // the CPU, which a loaded machine (CI runs three files at a time on two cores) gives out slowly.
    // Once every message has arrived and neither relay has anything in flight or unwritten, every
    // outcome is in the database. (A message never sent fails the test by its timeout.)
    await arrived
    await Promise.all([right.worker.idle(), skewed.worker.idle()])
    const [delivered] = await sql<{ n: number }>(
      database,
      "SELECT count(*)::int AS n FROM deliveries WHERE status = 'delivered'",
    )
    expect(delivered!.n).toBe(MESSAGES)

    const twice = [...counts].filter(([, n]) => n > 1).map(([id]) => id)
    expect({ received: counts.size, deliveredMoreThanOnce: twice.length }).toEqual({
      received: MESSAGES,
      deliveredMoreThanOnce: 0,
    })
    // The log shows one attempt per delivery, and both relays did part of the work.
    const attempts = await sql<{ n: number }>(database, 'SELECT count(*)::int AS n FROM attempts')
    expect(attempts[0]!.n).toBe(MESSAGES)
    expect(right.destination.sent).toBeGreaterThan(0)
    expect(skewed.destination.sent).toBeGreaterThan(0)
  }, 60_000)
})

describe('a relay on PostgreSQL', () => {
  it('exposes its clock’s offset to the database’s as tracklet_clock_offset_seconds', async () => {
    const relay = await createRelay({
      port: 0,
      database: await freshPostgresDatabase(),
      metricsToken: 'metrics-token-for-tests',
      sources: [{ name: 'web', writeKey: 'write-key-for-tests' }],
    })
    cleanups.push(() => relay.close())
    const offset = await waitFor(async () => {
      const response = await request(`${relay.url}/metrics`, {
        headers: { authorization: 'Bearer metrics-token-for-tests' },
      })
      const value = sampleValue(parseExposition(await response.body.text()), 'tracklet_clock_offset_seconds')
      return value === undefined || Number.isNaN(value) ? undefined : value
    }, 'the first measurement')
    // The database runs on this machine: one clock, read twice.
    expect(Math.abs(offset)).toBeLessThan(1)
  })
})

describe('a relay whose clock is 40 s ahead of PostgreSQL’s', () => {
  it('writes due times, retry delays and the retry window’s start on the database’s clock', async () => {
    const database = await freshPostgresDatabase()
    const relayNow = () => Date.now() + SKEW_MS
    const store = await openPostgresStore(database, { now: relayNow })
    cleanups.push(() => store.close())
    // Each time, as ms from the database's now (a few ms of this test's own round trips aside).
    const fromDatabaseNow = async (column: string) =>
      (
        await sql<{ ms: number }>(
          database,
          `SELECT (${column} - (extract(epoch FROM now()) * 1000)::bigint)::int AS ms FROM deliveries`,
        )
      )[0]!.ms

    await store.enqueue([testDelivery('m1')])
    expect(Math.abs(await fromDatabaseNow('next_attempt_at'))).toBeLessThan(5000) // due now, not in 40 s
    const [taken] = await store.claim({ source: 'web', limit: 1, owner: 'relay-skewed', leaseMs: LEASE_TIMEOUT })
    expect(taken).toBeDefined()
    expect(await fromDatabaseNow('lease_until')).toBeGreaterThan(0)
    expect(await fromDatabaseNow('lease_until')).toBeLessThanOrEqual(LEASE_TIMEOUT)

    const at = relayNow()
    await store.record([
      { id: taken!.id, at, requests: [], next: { status: 'pending', nextAttemptAt: at + 60_000, error: 'HTTP 503' } },
    ])
    // Due again 60 s from the database's now, and the window started at the database's now.
    expect(await fromDatabaseNow('next_attempt_at')).toBeGreaterThan(55_000)
    expect(await fromDatabaseNow('next_attempt_at')).toBeLessThanOrEqual(60_000)
    expect(Math.abs(await fromDatabaseNow('first_attempt_at'))).toBeLessThan(5000)
    const wait = await store.nextDueIn('web')
    expect(wait).toBeGreaterThan(55_000)

    // A minute on: claimed again, its window's start given on the relay's clock.
    await sql(
      database,
      'UPDATE deliveries SET next_attempt_at = next_attempt_at - 60000, first_attempt_at = first_attempt_at - 60000',
    )
    const [again] = await store.claim({ source: 'web', limit: 1, owner: 'relay-skewed', leaseMs: LEASE_TIMEOUT })
    expect(Math.abs(again!.firstAttemptAt! - (relayNow() - 60_000))).toBeLessThan(5000)
  })
})

describe('a probe of an open circuit, from a relay whose clock is 40 s ahead', () => {
  it('never takes a delivery another relay still holds, and takes it once that lease ends', async () => {
    const database = await freshPostgresDatabase()
    const right = await openPostgresStore(database)
    const skewed = await openPostgresStore(database, { now: () => Date.now() + SKEW_MS })
    cleanups.push(
      () => right.close(),
      () => skewed.close(),
    )
    const routes = [{ source: 'web', destination: 'Webhooks' }]
    await right.enqueue([testDelivery('m1')])
    const [held] = await right.claim({ source: 'web', limit: 1, owner: 'relay-right', leaseMs: LEASE_TIMEOUT })
    expect(await skewed.circuits.claimProbe(routes, 'relay-skewed', LEASE_TIMEOUT)).toBeUndefined()
    // The holder's lease ends (as if it died and LEASE_TIMEOUT passed).
    await sql(database, 'UPDATE deliveries SET lease_until = lease_until - $1', [LEASE_TIMEOUT])
    expect(await skewed.circuits.claimProbe(routes, 'relay-skewed', LEASE_TIMEOUT)).toMatchObject({ id: held!.id })
  })
})
