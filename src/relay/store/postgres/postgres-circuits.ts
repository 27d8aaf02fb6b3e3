import {
  type Circuit,
  type CircuitRow,
  type CircuitStore,
  type FailureReport,
  type ParkRequest,
  type DeliveryRoute,
  type SucceedResult,
  toCircuit,
} from '../circuits'
import { type ClaimedRow, toDueDelivery } from '../rows'
import type { DueDelivery } from '../store'
import { POSTGRES_STATEMENTS as SQL } from './statements'
import { SPILL } from './delivery-blocks'

/** What the circuits need of a connection pool: `pg.Pool` has it. */
export interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>
}

/**
 * The {@link CircuitStore} on PostgreSQL, shared by every relay on the database, made by the
 * PostgreSQL store over its own pool: each method is one statement, so it needs no transaction.
 */
export class PostgresCircuits implements CircuitStore {
  readonly #db: Queryable
  /** The relay's clock: the clock of the times callers pass and are given. */
  readonly #now: () => number
  /** A test's stand-in for the database's clock (see `PostgresStoreOptions.databaseNow`). */
  readonly #databaseNow: (() => number) | undefined

  constructor(
    db: Queryable,
    clocks: { now?: (() => number) | undefined; databaseNow?: (() => number) | undefined } = {},
  ) {
    this.#db = db
    this.#now = clocks.now ?? Date.now
    this.#databaseNow = clocks.databaseNow
  }

  async get(urls: readonly string[]): Promise<Circuit[]> {
    if (urls.length === 0) return []
    return this.#circuits(SQL.circuits, [urls])
  }

  async fail(report: FailureReport): Promise<Circuit> {
    const { url, failures, threshold, now, firstProbeAt, notBefore, error } = report
    const [circuit] = await this.#circuits(SQL.failCircuit, [
      url,
      failures,
      threshold,
      now,
      firstProbeAt,
      notBefore ?? 0,
      error,
    ])
    return circuit!
  }

  async succeed(url: string, routes: readonly DeliveryRoute[], now: number): Promise<SucceedResult> {
    const { rows } = await this.#db.query(SQL.succeed, [url, now, ...unzip(routes)])
    const row = rows[0] as { state: string | null; woken: number; paused: boolean }
    if (row.paused) return { wasOpen: false, woken: 0, paused: true }
    const wasOpen = row.state !== null && row.state !== 'closed'
    return { wasOpen, woken: wasOpen ? Number(row.woken) : 0 }
  }

  async takeProbe(url: string, owner: string, now: number, leaseUntil: number): Promise<Circuit | undefined> {
    return (await this.#circuits(SQL.takeProbe, [url, owner, now, leaseUntil]))[0]
  }

  async failProbe(
    url: string,
    owner: string,
    nextProbeAt: number,
    error: string,
    now: number,
  ): Promise<Circuit | undefined> {
    return (await this.#circuits(SQL.failProbe, [url, owner, nextProbeAt, error, now]))[0]
  }

  async returnProbe(url: string, owner: string, nextProbeAt: number, now: number): Promise<Circuit | undefined> {
    return (await this.#circuits(SQL.returnProbe, [url, owner, nextProbeAt, now]))[0]
  }

  async renewProbes(owner: string, urls: readonly string[], leaseUntil: number): Promise<void> {
    if (urls.length === 0) return
    await this.#db.query(SQL.renewProbes, [owner, urls, leaseUntil])
  }

  async claimProbe(routes: readonly DeliveryRoute[], owner: string, leaseMs: number): Promise<DueDelivery | undefined> {
    if (routes.length === 0) return undefined
    const clock = this.#databaseNow?.() ?? null
    // A probe takes a queue row: the free blocks of its sources become queue rows first.
    await this.#db.query(SPILL.freeOfSources, [[...new Set(routes.map((r) => r.source))], clock])
    const { rows } = await this.#db.query(SQL.claimProbe, [...unzip(routes), owner, leaseMs, clock])
    const row = rows[0] as (ClaimedRow & { clock_now: number }) | undefined
    if (row === undefined) return undefined
    const delivery = toDueDelivery(row)
    // Its window's start on the relay's clock, as Store.claim gives it.
    if (delivery.firstAttemptAt !== undefined) delivery.firstAttemptAt -= row.clock_now - this.#now()
    return delivery
  }

  async park(request: ParkRequest): Promise<number[]> {
    const { ids, owner, urls, now, until, window, error } = request
    if (ids.length === 0 || urls.length === 0) return []
    // Parked deliveries wait in queue rows: their blocks become queue rows first (./delivery-blocks.ts).
    await this.#db.query(SPILL.ofIds, [ids])
    const { rows } = await this.#db.query(SQL.park, [ids, owner, urls, now, until, window, error])
    return (rows as { id: number }[]).map((row) => Number(row.id))
  }

  async pause(url: string, now: number): Promise<Circuit> {
    const [circuit] = await this.#circuits(SQL.pauseCircuit, [url, now])
    return circuit!
  }

  async resume(
    url: string,
    routes: readonly DeliveryRoute[],
    now: number,
  ): Promise<{ wasPaused: boolean; woken: number }> {
    const { rows } = await this.#db.query(SQL.resumeCircuit, [url])
    if (rows.length === 0) return { wasPaused: false, woken: 0 }
    // A second statement, after the delete: see SQL.park for the race this closes.
    const woken = await this.#db.query(SQL.wake, [now, ...unzip(routes)])
    return { wasPaused: true, woken: Number((woken.rows[0] as { woken: number }).woken) }
  }

  async #circuits(text: string, values: unknown[]): Promise<Circuit[]> {
    const { rows } = await this.#db.query(text, values)
    return (rows as CircuitRow[]).map(toCircuit)
  }
}

// Routes as two parallel arrays, for unnest().
function unzip(routes: readonly DeliveryRoute[]): [string[], string[]] {
  return [routes.map((r) => r.source), routes.map((r) => r.destination)]
}
