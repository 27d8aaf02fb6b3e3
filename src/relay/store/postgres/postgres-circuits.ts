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

/**
 * The migration that adds the circuit breaker's table: append it to the PostgreSQL store's list of
 * migrations. One row per webhook URL whose receiver has been failing; times are epoch ms.
 */
export const POSTGRES_CIRCUITS_MIGRATION = `
  CREATE TABLE circuits (
    url               text    PRIMARY KEY,
    state             text    NOT NULL CHECK (state IN ('closed', 'open', 'half-open')),
    failures          integer NOT NULL DEFAULT 0,  -- failed requests in a row
    probes            integer NOT NULL DEFAULT 0,  -- failed probes since it opened
    opened_at         bigint,                      -- epoch ms
    next_probe_at     bigint,                      -- epoch ms
    probe_owner       text,                        -- the relay holding the probe (half-open)
    probe_lease_until bigint,                      -- epoch ms; then another relay may probe
    last_error        text,
    updated_at        bigint  NOT NULL
  );
`

/** What the circuits need of a connection pool: `pg.Pool` has it. */
export interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>
}

// Counts failures; the closed circuit whose run reaches the threshold opens. In SET, every column
// read is the row as it was, so each CASE judges the same old state. $1 url, $2 failures,
// $3 threshold, $4 now, $5 firstProbeAt, $6 notBefore, $7 error.
const FAIL = `
  INSERT INTO circuits AS c (url, state, failures, probes, opened_at, next_probe_at, last_error, updated_at)
  VALUES ($1::text, CASE WHEN $2::int >= $3::int THEN 'open' ELSE 'closed' END, $2::int, 0,
    CASE WHEN $2::int >= $3::int THEN $4::bigint END, CASE WHEN $2::int >= $3::int THEN $5::bigint END,
    $7::text, $4::bigint)
  ON CONFLICT (url) DO UPDATE SET
    state = CASE WHEN c.state = 'closed' AND c.failures + $2::int >= $3::int THEN 'open' ELSE c.state END,
    opened_at = CASE WHEN c.state = 'closed' AND c.failures + $2::int >= $3::int THEN $4::bigint ELSE c.opened_at END,
    next_probe_at = CASE
      WHEN c.state <> 'closed' THEN greatest(c.next_probe_at, $6::bigint)
      WHEN c.failures + $2::int >= $3::int THEN $5::bigint
    END,
    failures = c.failures + $2::int,
    last_error = $7::text,
    updated_at = $4::bigint
  RETURNING *`

// One statement: the row goes and, if it was open, the routes' deliveries are due now. A data-
// modifying CTE's RETURNING is what the rest of the statement sees. $1 url, $2 now, $3 sources,
// $4 destinations.
const SUCCEED = `
  WITH gone AS (DELETE FROM circuits WHERE url = $1::text RETURNING state),
  woken AS (
    UPDATE deliveries SET next_attempt_at = $2::bigint, updated_at = $2::bigint
    WHERE status = 'pending' AND next_attempt_at > $2::bigint
      AND (source, destination) IN (SELECT * FROM unnest($3::text[], $4::text[]))
      AND EXISTS (SELECT 1 FROM gone WHERE state <> 'closed')
    RETURNING 1)
  SELECT (SELECT state FROM gone) AS state, (SELECT count(*) FROM woken)::int AS woken`

const TAKE_PROBE = `
  UPDATE circuits SET state = 'half-open', probe_owner = $2::text, probe_lease_until = $4::bigint, updated_at = $3::bigint
  WHERE url = $1::text AND state <> 'closed' AND next_probe_at <= $3::bigint
    AND (probe_lease_until IS NULL OR probe_lease_until <= $3::bigint)
  RETURNING *`

const FAIL_PROBE = `
  UPDATE circuits SET state = 'open', probes = probes + 1, failures = failures + 1, next_probe_at = $3::bigint,
    probe_owner = NULL, probe_lease_until = NULL, last_error = $4::text, updated_at = $5::bigint
  WHERE url = $1::text AND probe_owner = $2::text
  RETURNING *`

const RETURN_PROBE = `
  UPDATE circuits SET state = 'open', next_probe_at = $3::bigint, probe_owner = NULL, probe_lease_until = NULL,
    updated_at = $4::bigint
  WHERE url = $1::text AND probe_owner = $2::text
  RETURNING *`

const RENEW_PROBES = `
  UPDATE circuits SET probe_lease_until = $3::bigint WHERE probe_owner = $1::text AND url = ANY($2::text[])`

// SKIP LOCKED: a delivery another relay is claiming right now is not waited for.
const CLAIM_PROBE = `
  UPDATE deliveries SET lease_until = $4::bigint, lease_owner = $3::text
  WHERE id = (
    SELECT id FROM deliveries
    WHERE status = 'pending' AND (source, destination) IN (SELECT * FROM unnest($1::text[], $2::text[]))
      AND (lease_until IS NULL OR lease_until <= $5::bigint)
    ORDER BY next_attempt_at, id LIMIT 1
    FOR UPDATE SKIP LOCKED)
  RETURNING id, source, destination, message, attempts, first_attempt_at`

// $1 ids, $2 owner, $3 urls, $4 now, $5 until, $6 window, $7 error.
const PARK = `
  UPDATE deliveries SET next_attempt_at = least($5::bigint, coalesce(first_attempt_at, $4::bigint) + $6::bigint),
    first_attempt_at = coalesce(first_attempt_at, $4::bigint), last_error = $7::text, updated_at = $4::bigint,
    lease_until = NULL, lease_owner = NULL
  WHERE id = ANY($1::bigint[]) AND lease_owner = $2::text AND status = 'pending'
    AND (SELECT count(*) FROM circuits WHERE url = ANY($3::text[]) AND state <> 'closed') = cardinality($3::text[])
  RETURNING id`

/**
 * The {@link CircuitStore} on PostgreSQL, shared by every relay on the database: each method is
 * one statement, so it needs no transaction and works over any pool.
 */
export class PostgresCircuits implements CircuitStore {
  readonly #db: Queryable

  constructor(db: Queryable) {
    this.#db = db
  }

  async get(urls: readonly string[]): Promise<Circuit[]> {
    if (urls.length === 0) return []
    return this.#circuits('SELECT * FROM circuits WHERE url = ANY($1::text[])', [urls])
  }

  async fail(report: FailureReport): Promise<Circuit> {
    const { url, failures, threshold, now, firstProbeAt, notBefore, error } = report
    const [circuit] = await this.#circuits(FAIL, [url, failures, threshold, now, firstProbeAt, notBefore ?? 0, error])
    return circuit!
  }

  async succeed(url: string, routes: readonly Route[], now: number): Promise<{ wasOpen: boolean; woken: number }> {
    const { rows } = await this.#db.query(SUCCEED, [url, now, ...unzip(routes)])
    const row = rows[0] as { state: string | null; woken: number }
    const wasOpen = row.state !== null && row.state !== 'closed'
    return { wasOpen, woken: wasOpen ? Number(row.woken) : 0 }
  }

  async takeProbe(url: string, owner: string, now: number, leaseUntil: number): Promise<Circuit | undefined> {
    return (await this.#circuits(TAKE_PROBE, [url, owner, now, leaseUntil]))[0]
  }

  async failProbe(
    url: string,
    owner: string,
    nextProbeAt: number,
    error: string,
    now: number,
  ): Promise<Circuit | undefined> {
    return (await this.#circuits(FAIL_PROBE, [url, owner, nextProbeAt, error, now]))[0]
  }

  async returnProbe(url: string, owner: string, nextProbeAt: number, now: number): Promise<Circuit | undefined> {
    return (await this.#circuits(RETURN_PROBE, [url, owner, nextProbeAt, now]))[0]
  }

  async renewProbes(owner: string, urls: readonly string[], leaseUntil: number): Promise<void> {
    if (urls.length === 0) return
    await this.#db.query(RENEW_PROBES, [owner, urls, leaseUntil])
  }

  async claimProbe(
    routes: readonly Route[],
    owner: string,
    now: number,
    leaseUntil: number,
  ): Promise<DueDelivery | undefined> {
    if (routes.length === 0) return undefined
    const { rows } = await this.#db.query(CLAIM_PROBE, [...unzip(routes), owner, leaseUntil, now])
    const row = rows[0] as DeliveryRow | undefined
    return row === undefined ? undefined : toDueDelivery(row)
  }

  async park(request: ParkRequest): Promise<number[]> {
    const { ids, owner, urls, now, until, window, error } = request
    if (ids.length === 0 || urls.length === 0) return []
    const { rows } = await this.#db.query(PARK, [ids, owner, urls, now, until, window, error])
    return (rows as { id: number }[]).map((row) => Number(row.id))
  }

  async #circuits(text: string, values: unknown[]): Promise<Circuit[]> {
    const { rows } = await this.#db.query(text, values)
    return (rows as CircuitRow[]).map(toCircuit)
  }
}

// Routes as two parallel arrays, for unnest().
function unzip(routes: readonly Route[]): [string[], string[]] {
  return [routes.map((r) => r.source), routes.map((r) => r.destination)]
}
