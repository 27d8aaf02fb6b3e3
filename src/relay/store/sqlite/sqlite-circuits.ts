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
import type { StatementCache } from './statement-cache'
import { SQLITE_CHUNK, SQLITE_STATEMENTS as SQL } from './statements'

/**
 * The {@link CircuitStore} on the relay's SQLite database (the `circuits` table, and the
 * `deliveries` the breaker parks and wakes), made by the SQLite store over its own database. One
 * file serves one relay: a probe held by this relay's previous run is given back at once.
 */
export class SqliteCircuits implements CircuitStore {
  /** The store's prepared statements, shared with it. */
  readonly #sql: StatementCache
  readonly #succeed: (url: string, routes: readonly DeliveryRoute[], now: number) => SucceedResult
  readonly #resume: (
    url: string,
    routes: readonly DeliveryRoute[],
    now: number,
  ) => { wasPaused: boolean; woken: number }

  /** The process's clock, which judges and writes probe claims' leases. */
  readonly #now: () => number

  /** `sharedByProcesses`: a probe standing is another process's (`--workers`), not a previous run's. */
  constructor(sql: StatementCache, now: () => number = Date.now, { sharedByProcesses = false } = {}) {
    this.#now = now
    this.#sql = sql
    if (!sharedByProcesses) sql.get(SQL.giveBackProbes).run()
    this.#succeed = sql.db.transaction((url: string, routes: readonly DeliveryRoute[], now: number) => {
      const gone = sql.get(SQL.succeed).get(url) as { state: string } | undefined
      if (gone === undefined) {
        const kept = sql.get(SQL.circuits(1)).get(url) as CircuitRow | undefined
        return kept?.state === 'paused' ? { wasOpen: false, woken: 0, paused: true } : { wasOpen: false, woken: 0 }
      }
      if (gone.state === 'closed') return { wasOpen: false, woken: 0 }
      let woken = 0
      for (const route of routes) woken += sql.get(SQL.wake).run({ now, ...route }).changes
      return { wasOpen: true, woken }
    })
    this.#resume = sql.db.transaction((url: string, routes: readonly DeliveryRoute[], now: number) => {
      if (sql.get(SQL.resumeCircuit).get(url) === undefined) return { wasPaused: false, woken: 0 }
      let woken = 0
      for (const route of routes) woken += sql.get(SQL.wake).run({ now, ...route }).changes
      return { wasPaused: true, woken }
    })
  }

  async pause(url: string, now: number): Promise<Circuit> {
    return toCircuit(this.#sql.get(SQL.pauseCircuit).get({ url, now }) as CircuitRow)
  }

  async resume(
    url: string,
    routes: readonly DeliveryRoute[],
    now: number,
  ): Promise<{ wasPaused: boolean; woken: number }> {
    return this.#resume(url, routes, now)
  }

  async get(urls: readonly string[]): Promise<Circuit[]> {
    if (urls.length === 0) return []
    const rows = this.#sql.get(SQL.circuits(urls.length)).all(...urls) as CircuitRow[]
    return rows.map(toCircuit)
  }

  async fail(report: FailureReport): Promise<Circuit> {
    const { notBefore, ...rest } = report
    return toCircuit(this.#sql.get(SQL.failCircuit).get({ ...rest, notBefore: notBefore ?? 0 }) as CircuitRow)
  }

  async succeed(url: string, routes: readonly DeliveryRoute[], now: number): Promise<SucceedResult> {
    return this.#succeed(url, routes, now)
  }

  async takeProbe(url: string, owner: string, now: number, leaseUntil: number): Promise<Circuit | undefined> {
    return optionalCircuit(this.#sql.get(SQL.takeProbe).get({ url, owner, now, leaseUntil }))
  }

  async failProbe(
    url: string,
    owner: string,
    nextProbeAt: number,
    error: string,
    now: number,
  ): Promise<Circuit | undefined> {
    return optionalCircuit(this.#sql.get(SQL.failProbe).get({ url, owner, nextProbeAt, error, now }))
  }

  async returnProbe(url: string, owner: string, nextProbeAt: number, now: number): Promise<Circuit | undefined> {
    return optionalCircuit(this.#sql.get(SQL.returnProbe).get({ url, owner, nextProbeAt, now }))
  }

  async renewProbes(owner: string, urls: readonly string[], leaseUntil: number): Promise<void> {
    if (urls.length === 0) return
    this.#sql.get(SQL.renewProbes(urls.length)).run(leaseUntil, owner, ...urls)
  }

  async claimProbe(routes: readonly DeliveryRoute[], owner: string, leaseMs: number): Promise<DueDelivery | undefined> {
    if (routes.length === 0) return undefined
    const now = this.#now()
    const leaseUntil = now + leaseMs
    const row = this.#sql
      .get(SQL.claimProbe(routes.length))
      .get(leaseUntil, owner, ...routes.flatMap((r) => [r.source, r.destination]), now) as ClaimedRow | undefined
    return row === undefined ? undefined : toDueDelivery(row)
  }

  async park(request: ParkRequest): Promise<number[]> {
    const { ids, owner, urls, now, until, window, error } = request
    if (urls.length === 0) return []
    const parked: number[] = []
    // In chunks, within SQLite's limit on bound parameters.
    for (let start = 0; start < ids.length; start += SQLITE_CHUNK) {
      const chunk = ids.slice(start, start + SQLITE_CHUNK)
      const done = this.#sql
        .get(SQL.park(chunk.length, urls.length))
        .pluck()
        .all(...urls, ...chunk, { urls: urls.length, until, now, window, error, owner }) as number[]
      parked.push(...done)
    }
    return parked
  }
}

function optionalCircuit(row: unknown): Circuit | undefined {
  return row === undefined ? undefined : toCircuit(row as CircuitRow)
}
