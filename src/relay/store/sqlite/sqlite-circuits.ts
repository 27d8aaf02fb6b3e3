import type Database from 'better-sqlite3'
import {
  type Circuit,
  type CircuitRow,
  type CircuitStore,
  type FailureReport,
  type ParkRequest,
  type Route,
  toCircuit,
  toDueDelivery,
} from '../circuits'
import type { DeliveryRow } from '../rows'
import type { DueDelivery } from '../store'
import type { SqliteDatabase } from './schema'
import { StatementCache } from './statements'

// Counts failures; the closed circuit whose run reaches the threshold opens. In SET, every column
// read is the row as it was, so each CASE judges the same old state.
const FAIL = `
  INSERT INTO circuits (url, state, failures, probes, opened_at, next_probe_at, last_error, updated_at)
  VALUES (@url, CASE WHEN @failures >= @threshold THEN 'open' ELSE 'closed' END, @failures, 0,
    CASE WHEN @failures >= @threshold THEN @now END, CASE WHEN @failures >= @threshold THEN @firstProbeAt END,
    @error, @now)
  ON CONFLICT (url) DO UPDATE SET
    state = CASE WHEN state = 'closed' AND failures + @failures >= @threshold THEN 'open' ELSE state END,
    opened_at = CASE WHEN state = 'closed' AND failures + @failures >= @threshold THEN @now ELSE opened_at END,
    next_probe_at = CASE
      WHEN state <> 'closed' THEN max(next_probe_at, @notBefore)
      WHEN failures + @failures >= @threshold THEN @firstProbeAt
    END,
    failures = failures + @failures,
    last_error = @error,
    updated_at = @now
  RETURNING *`

const TAKE_PROBE = `
  UPDATE circuits SET state = 'half-open', probe_owner = @owner, probe_lease_until = @leaseUntil, updated_at = @now
  WHERE url = @url AND state <> 'closed' AND next_probe_at <= @now
    AND (probe_lease_until IS NULL OR probe_lease_until <= @now)
  RETURNING *`

const FAIL_PROBE = `
  UPDATE circuits SET state = 'open', probes = probes + 1, failures = failures + 1, next_probe_at = @nextProbeAt,
    probe_owner = NULL, probe_lease_until = NULL, last_error = @error, updated_at = @now
  WHERE url = @url AND probe_owner = @owner
  RETURNING *`

const RETURN_PROBE = `
  UPDATE circuits SET state = 'open', next_probe_at = @nextProbeAt, probe_owner = NULL, probe_lease_until = NULL,
    updated_at = @now
  WHERE url = @url AND probe_owner = @owner
  RETURNING *`

const WAKE = `
  UPDATE deliveries SET next_attempt_at = @now, updated_at = @now
  WHERE status = 'pending' AND source = @source AND destination = @destination AND next_attempt_at > @now`

/**
 * The {@link CircuitStore} on the relay's SQLite database (the `circuits` table, and the
 * `deliveries` the breaker parks and wakes). One file serves one relay: a probe held by this
 * relay's previous run is given back at once.
 */
export class SqliteCircuits implements CircuitStore {
  readonly #db: SqliteDatabase
  /** Statements whose text depends on a list's length, prepared once each. */
  readonly #statements: StatementCache
  readonly #fail: Database.Statement
  readonly #takeProbe: Database.Statement
  readonly #failProbe: Database.Statement
  readonly #returnProbe: Database.Statement
  readonly #succeed: (url: string, routes: readonly Route[], now: number) => { wasOpen: boolean; woken: number }

  constructor(db: SqliteDatabase, { sharedByProcesses = false }: { sharedByProcesses?: boolean } = {}) {
    this.#db = db
    this.#statements = new StatementCache(db)
    // [relay-workers] On a file shared by `--workers` processes, a probe standing is another's.
    if (!sharedByProcesses)
      db.prepare(
        `UPDATE circuits SET state = 'open', probe_owner = NULL, probe_lease_until = NULL WHERE state = 'half-open'`,
      ).run()
    this.#fail = db.prepare(FAIL)
    this.#takeProbe = db.prepare(TAKE_PROBE)
    this.#failProbe = db.prepare(FAIL_PROBE)
    this.#returnProbe = db.prepare(RETURN_PROBE)
    const remove = db.prepare('DELETE FROM circuits WHERE url = ? RETURNING state')
    const wake = db.prepare(WAKE)
    this.#succeed = db.transaction((url: string, routes: readonly Route[], now: number) => {
      const gone = remove.get(url) as { state: string } | undefined
      if (gone === undefined || gone.state === 'closed') return { wasOpen: false, woken: 0 }
      let woken = 0
      for (const route of routes) woken += wake.run({ now, ...route }).changes
      return { wasOpen: true, woken }
    })
  }

  async get(urls: readonly string[]): Promise<Circuit[]> {
    if (urls.length === 0) return []
    const rows = this.#statements
      .get(`SELECT * FROM circuits WHERE url IN (${urls.map(() => '?').join(',')})`)
      .all(...urls) as CircuitRow[]
    return rows.map(toCircuit)
  }

  async fail(report: FailureReport): Promise<Circuit> {
    const { notBefore, ...rest } = report
    return toCircuit(this.#fail.get({ ...rest, notBefore: notBefore ?? 0 }) as CircuitRow)
  }

  async succeed(url: string, routes: readonly Route[], now: number): Promise<{ wasOpen: boolean; woken: number }> {
    return this.#succeed(url, routes, now)
  }

  async takeProbe(url: string, owner: string, now: number, leaseUntil: number): Promise<Circuit | undefined> {
    return optionalCircuit(this.#takeProbe.get({ url, owner, now, leaseUntil }))
  }

  async failProbe(
    url: string,
    owner: string,
    nextProbeAt: number,
    error: string,
    now: number,
  ): Promise<Circuit | undefined> {
    return optionalCircuit(this.#failProbe.get({ url, owner, nextProbeAt, error, now }))
  }

  async returnProbe(url: string, owner: string, nextProbeAt: number, now: number): Promise<Circuit | undefined> {
    return optionalCircuit(this.#returnProbe.get({ url, owner, nextProbeAt, now }))
  }

  async renewProbes(owner: string, urls: readonly string[], leaseUntil: number): Promise<void> {
    if (urls.length === 0) return
    this.#statements
      .get(
        `UPDATE circuits SET probe_lease_until = ? WHERE probe_owner = ? AND url IN (${urls.map(() => '?').join(',')})`,
      )
      .run(leaseUntil, owner, ...urls)
  }

  async claimProbe(
    routes: readonly Route[],
    owner: string,
    now: number,
    leaseUntil: number,
  ): Promise<DueDelivery | undefined> {
    if (routes.length === 0) return undefined
    const row = this.#statements
      .get(`
        UPDATE deliveries SET lease_until = ?, lease_owner = ?
        WHERE id = (
          SELECT id FROM deliveries
          WHERE status = 'pending' AND (source, destination) IN (VALUES ${routes.map(() => '(?, ?)').join(', ')})
            AND (lease_until IS NULL OR lease_until <= ?)
          ORDER BY next_attempt_at, id LIMIT 1)
        RETURNING id, source, destination, message, attempts, first_attempt_at`)
      .get(leaseUntil, owner, ...routes.flatMap((r) => [r.source, r.destination]), now) as DeliveryRow | undefined
    return row === undefined ? undefined : toDueDelivery(row)
  }

  async park(request: ParkRequest): Promise<number[]> {
    const { ids, owner, urls, now, until, window, error } = request
    if (urls.length === 0) return []
    const list = (values: readonly unknown[]) => values.map(() => '?').join(',')
    const parked: number[] = []
    // In chunks, within SQLite's limit on bound parameters.
    for (let start = 0; start < ids.length; start += 500) {
      const chunk = ids.slice(start, start + 500)
      const done = this.#statements
        .get(`
          UPDATE deliveries SET next_attempt_at = min(?, coalesce(first_attempt_at, ?) + ?),
            first_attempt_at = coalesce(first_attempt_at, ?), last_error = ?, updated_at = ?,
            lease_until = NULL, lease_owner = NULL
          WHERE id IN (${list(chunk)}) AND lease_owner = ? AND status = 'pending'
            AND (SELECT count(*) FROM circuits WHERE url IN (${list(urls)}) AND state <> 'closed') = ?
          RETURNING id`)
        .pluck()
        .all(until, now, window, now, error, now, ...chunk, owner, ...urls, urls.length) as number[]
      parked.push(...done)
    }
    return parked
  }
}

function optionalCircuit(row: unknown): Circuit | undefined {
  return row === undefined ? undefined : toCircuit(row as CircuitRow)
}
