import type { EndpointLimitState, EndpointLimitStore, SlotGrant, TokenGrant } from '../endpoint-limits'
import { TAKE_SLOT_FUNCTION, TAKE_TOKENS_FUNCTION } from './endpoint-limits-schema'
import type { Queryable } from './postgres-circuits'
import { SPILL } from './delivery-blocks'

// The statements of the limits (their tables and functions: ./endpoint-limits-schema.ts). $-last
// is the clock: null, so the database's is read, unless a test stands in for it.
const SQL = {
  takeTokens: `SELECT granted, wait_ms AS "waitMs", held_ms AS "heldMs"
    FROM ${TAKE_TOKENS_FUNCTION}($1::text, $2::integer, $3::float8, $4::float8, $5::bigint)`,
  takeSlot: `SELECT taken, held_ms AS "heldMs" FROM ${TAKE_SLOT_FUNCTION}($1::text, $2::text, $3::integer, $4::integer, $5::bigint, $6::bigint)`,
  give: 'UPDATE endpoint_slots SET held = greatest(held - $3::integer, 0) WHERE url = $1::text AND owner = $2::text',
  hold: `INSERT INTO endpoint_budgets AS b (url, held_until)
    VALUES ($1::text, coalesce($3::bigint, (extract(epoch FROM clock_timestamp()) * 1000)::bigint) + $2::bigint)
    ON CONFLICT (url) DO UPDATE SET held_until = greatest(b.held_until, EXCLUDED.held_until)`,
  defer: `
    UPDATE queue SET
      next_attempt_at = coalesce($5::bigint, (extract(epoch FROM clock_timestamp()) * 1000)::bigint) + $3::bigint,
      last_error = $4::text, updated_at = $6::bigint, lease_until = NULL, lease_owner = NULL
    WHERE id = ANY($1::bigint[]) AND lease_owner = $2::text AND status = 'pending'
    RETURNING id`,
  declare: `INSERT INTO endpoint_budgets AS b (url, rate_per_second, max_in_flight)
    SELECT * FROM unnest($1::text[], $2::float8[], $3::integer[])
    ON CONFLICT (url) DO UPDATE SET rate_per_second = EXCLUDED.rate_per_second, max_in_flight = EXCLUDED.max_in_flight`,
  read: `
    WITH clock AS (SELECT coalesce($2::bigint, (extract(epoch FROM clock_timestamp()) * 1000)::bigint) AS at)
    SELECT b.url, b.held_until AS "heldUntil", b.tat, b.rate_per_second AS "ratePerSecond", b.max_in_flight AS "maxInFlight",
      (SELECT coalesce(sum(held), 0) FROM endpoint_slots s WHERE s.url = b.url AND s.lease_until > clock.at)
        AS "inFlight"
    FROM endpoint_budgets b, clock WHERE b.url = ANY($1::text[])`,
}

/**
 * The {@link EndpointLimitStore} on PostgreSQL, shared by every relay on the database: each take
 * is one call of its function (one round trip), judged by the database's clock.
 */
export class PostgresEndpointLimits implements EndpointLimitStore {
  readonly #db: Queryable
  readonly #now: () => number
  readonly #databaseNow: (() => number) | undefined

  constructor(
    db: Queryable,
    clocks: { now?: (() => number) | undefined; databaseNow?: (() => number) | undefined } = {},
  ) {
    this.#db = db
    this.#now = clocks.now ?? Date.now
    this.#databaseNow = clocks.databaseNow
  }

  async takeTokens(url: string, want: number, intervalMs: number, burstMs: number): Promise<TokenGrant> {
    const { rows } = await this.#db.query(SQL.takeTokens, [url, want, intervalMs, burstMs, this.#clock()])
    const row = rows[0] as { granted: number; waitMs: string; heldMs: string }
    return { granted: Number(row.granted), waitMs: Number(row.waitMs), heldMs: Number(row.heldMs) }
  }

  async takeSlots(url: string, owner: string, max: number, want: number, leaseMs: number): Promise<SlotGrant> {
    const { rows } = await this.#db.query(SQL.takeSlot, [url, owner, max, want, Math.ceil(leaseMs), this.#clock()])
    const row = rows[0] as { taken: number; heldMs: string }
    return { taken: Number(row.taken), heldMs: Number(row.heldMs) }
  }

  async returnSlots(url: string, owner: string, count: number): Promise<void> {
    await this.#db.query(SQL.give, [url, owner, count])
  }

  async hold(url: string, ms: number): Promise<void> {
    await this.#db.query(SQL.hold, [url, Math.ceil(ms), this.#clock()])
  }

  async defer(owner: string, ids: readonly number[], waitMs: number, error: string): Promise<number[]> {
    if (ids.length === 0) return []
    // Deferred deliveries wait in queue rows: their blocks become queue rows first (./delivery-blocks.ts).
    await this.#db.query(SPILL.ofIds, [ids])
    const { rows } = await this.#db.query(SQL.defer, [ids, owner, Math.ceil(waitMs), error, this.#clock(), this.#now()])
    return rows.map((row) => Number((row as { id: string }).id))
  }

  async declare(limits: ReadonlyMap<string, { ratePerSecond?: number; maxInFlight?: number }>): Promise<void> {
    if (limits.size === 0) return
    const entries = [...limits]
    await this.#db.query(SQL.declare, [
      entries.map(([url]) => url),
      entries.map(([, limit]) => limit.ratePerSecond ?? null),
      entries.map(([, limit]) => limit.maxInFlight ?? null),
    ])
  }

  async read(urls: readonly string[]): Promise<EndpointLimitState[]> {
    if (urls.length === 0) return []
    const { rows } = await this.#db.query(SQL.read, [urls, this.#clock()])
    type Row = {
      url: string
      heldUntil: string
      tat: number
      inFlight: string
      ratePerSecond: number | null
      maxInFlight: number | null
    }
    return (rows as Row[]).map((row) => ({
      url: row.url,
      ratePerSecond: row.ratePerSecond ?? undefined,
      maxInFlight: row.maxInFlight ?? undefined,
      inFlight: Number(row.inFlight),
      heldUntil: Number(row.heldUntil),
      tat: Number(row.tat),
    }))
  }

  #clock(): number | null {
    return this.#databaseNow?.() ?? null
  }
}
