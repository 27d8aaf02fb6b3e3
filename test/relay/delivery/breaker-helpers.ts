import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { BreakerPolicy } from '../../../src/relay/delivery/breaker-policy'
import type { SendsOne as Destination } from '../../../src/relay/destinations/webhooks/sender'
import type { Worker } from '../../../src/relay/delivery/worker'
import type { CircuitStore } from '../../../src/relay/store/circuits'
import { openSqliteStore, type SqliteStore } from '../../../src/relay/store/sqlite/sqlite-store'
import { nextAttemptAt, type RetryState, WebhookDestination } from '../../../src/webhooks/index'
import { T0, testDelivery } from '../fixtures/deliveries'
import { retries, testWorker } from '../fixtures/worker'

export { T0 }

/** A clock the test moves by hand (nothing falls due by itself). */
export function frozenClock(start = T0) {
  let now = start
  return { now: () => now, advance: (ms: number) => (now += ms) }
}

/** A real node:http receiver that counts requests, and the most it had unanswered at once. */
export interface CountingReceiver {
  url: string
  /** Requests received, in order, by message id. */
  requests: string[]
  /** Requests received and not answered yet. */
  inFlight: number
  /** The most requests it held unanswered at once. */
  mostInFlight: number
  /** How it answers from now on (by default 200). */
  respond(handler: (req: IncomingMessage, res: ServerResponse) => void): void
  close(): Promise<void>
}

export async function countingReceiver(): Promise<CountingReceiver> {
  let handler = (_req: IncomingMessage, res: ServerResponse): void => void res.writeHead(200).end()
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      receiver.requests.push((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { messageId: string }).messageId)
      receiver.inFlight++
      receiver.mostInFlight = Math.max(receiver.mostInFlight, receiver.inFlight)
      res.on('close', () => receiver.inFlight--)
      handler(req, res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const receiver: CountingReceiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    requests: [],
    inFlight: 0,
    mostInFlight: 0,
    respond: (next) => {
      handler = next
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
  return receiver
}

/** Answers 503 (with a `Retry-After` when given, in seconds). */
export function unavailable(retryAfterSeconds?: number) {
  return (_req: IncomingMessage, res: ServerResponse): void =>
    void res.writeHead(503, retryAfterSeconds === undefined ? {} : { 'retry-after': String(retryAfterSeconds) }).end()
}

export const POLICY: BreakerPolicy = {
  failureThreshold: 3,
  probeInterval: 1000,
  maxProbeInterval: 8000,
  maxInFlightPerUrl: 2,
}

/** A message of `source` as the store keeps it. */
export function delivery(source: string, messageId: string) {
  return testDelivery(messageId, { source, timestamp: new Date(T0).toISOString() })
}

export interface BreakerSetup {
  store: SqliteStore
  circuits: CircuitStore
  now: () => number
  /** A worker with the breaker; several may share the store, as relays share a database. */
  worker(owner?: string): Worker
  /** Enqueues `count` messages of `source` named `<prefix>-<i>`. */
  enqueue(source: string, count: number, prefix?: string): Promise<void>
  /** Every delivery in the log. */
  log(): ReturnType<SqliteStore['list']>
}

/**
 * An in-memory store with the circuits table, and workers over it: each source sends to its
 * webhook URLs through a real Webhooks destination, or through `destination` when given.
 */
export async function breakerSetup(options: {
  sources: Record<string, string[]>
  now: () => number
  policy?: Partial<BreakerPolicy>
  concurrency?: number
  random?: () => number
  schedule?: (state: RetryState) => number | undefined
  destination?: (urls: string[]) => Destination
}): Promise<BreakerSetup> {
  const store = await openSqliteStore(':memory:', options.now)
  const circuits = store.circuits
  const destinations = new Map(
    Object.entries(options.sources).map(([source, urls]) => [
      source,
      new Map([
        ['Webhooks', options.destination?.(urls) ?? new WebhookDestination({ webhooks: urls.map((url) => ({ url })) })],
      ]),
    ]),
  )
  return {
    store,
    circuits,
    now: options.now,
    worker: (owner = randomUUID()) =>
      testWorker({
        store,
        destinations,
        retries: retries(options.schedule ?? ((state) => nextAttemptAt(state, () => 0.5))),
        concurrency: options.concurrency ?? 4,
        owner,
        now: options.now,
        breaker: { ...POLICY, ...options.policy, circuits, random: options.random ?? (() => 0) },
      }),
    enqueue: async (source, count, prefix = source) => {
      await store.enqueue(Array.from({ length: count }, (_, i) => delivery(source, `${prefix}-${i}`)))
    },
    log: () => store.list({ after: 0, limit: 10_000 }),
  }
}
