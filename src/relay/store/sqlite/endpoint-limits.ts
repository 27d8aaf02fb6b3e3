import {
  type EndpointLimitState,
  type EndpointLimitStore,
  gcra,
  type SlotGrant,
  type TokenGrant,
} from '../endpoint-limits'
import type { StatementCache } from './statement-cache'

// The statements of the limits' tables (their schema: ./endpoint-limits-schema.ts).
const SQL = {
  ensure: 'INSERT INTO endpoint_budgets (url) VALUES (?) ON CONFLICT (url) DO NOTHING',
  budget: 'SELECT tat, held_until FROM endpoint_budgets WHERE url = ?',
  setTat: 'UPDATE endpoint_budgets SET tat = ? WHERE url = ?',
  used: 'SELECT coalesce(sum(held), 0) FROM endpoint_slots WHERE url = ? AND lease_until > ?',
  take: `INSERT INTO endpoint_slots (url, owner, held, lease_until) VALUES (@url, @owner, @count, @until)
    ON CONFLICT (url, owner) DO UPDATE
    SET held = CASE WHEN lease_until > @now THEN held + @count ELSE @count END, lease_until = @until`,
  give: 'UPDATE endpoint_slots SET held = max(held - ?, 0) WHERE url = ? AND owner = ?',
  hold: `INSERT INTO endpoint_budgets (url, held_until) VALUES (@url, @until)
    ON CONFLICT (url) DO UPDATE SET held_until = max(held_until, @until)`,
  defer: (ids: number) => `
    UPDATE deliveries SET next_attempt_at = @due, last_error = @error, updated_at = @now,
      lease_until = NULL, lease_owner = NULL
    WHERE id IN (${Array.from({ length: ids }, () => '?').join(', ')})
      AND lease_owner = @owner AND status = 'pending'
    RETURNING id`,
  declare: `INSERT INTO endpoint_budgets (url, rate_per_second, max_in_flight) VALUES (?, ?, ?)
    ON CONFLICT (url) DO UPDATE SET rate_per_second = excluded.rate_per_second, max_in_flight = excluded.max_in_flight`,
  read: (urls: number) => `
    SELECT b.url, b.held_until AS heldUntil, b.tat, b.rate_per_second AS ratePerSecond, b.max_in_flight AS maxInFlight,
      (SELECT coalesce(sum(held), 0) FROM endpoint_slots s WHERE s.url = b.url AND s.lease_until > ?) AS inFlight
    FROM endpoint_budgets b WHERE b.url IN (${Array.from({ length: urls }, () => '?').join(', ')})`,
}

/**
 * The {@link EndpointLimitStore} on SQLite. Each take is one IMMEDIATE transaction: the processes
 * of `--workers` sharing the file take turns on it, so their counts never race.
 */
export class SqliteEndpointLimits implements EndpointLimitStore {
  readonly #sql: StatementCache
  readonly #now: () => number
  readonly #takeTokens: (url: string, want: number, intervalMs: number, burstMs: number) => TokenGrant
  readonly #takeSlots: (url: string, owner: string, max: number, want: number, leaseMs: number) => SlotGrant

  constructor(sql: StatementCache, now: () => number = Date.now) {
    this.#sql = sql
    this.#now = now
    const tokens = sql.db.transaction((url: string, want: number, intervalMs: number, burstMs: number) => {
      const at = this.#now()
      sql.get(SQL.ensure).run(url)
      const row = sql.get(SQL.budget).get(url) as { tat: number; held_until: number }
      if (row.held_until > at) return { granted: 0, waitMs: row.held_until - at, heldMs: row.held_until - at }
      const grant = gcra(row.tat, at, want, intervalMs, burstMs)
      if (grant.granted > 0) sql.get(SQL.setTat).run(grant.tat, url)
      return { granted: grant.granted, waitMs: grant.waitMs, heldMs: 0 }
    })
    const slot = sql.db.transaction((url: string, owner: string, max: number, want: number, leaseMs: number) => {
      const at = this.#now()
      sql.get(SQL.ensure).run(url)
      const row = sql.get(SQL.budget).get(url) as { held_until: number }
      if (row.held_until > at) return { taken: 0, heldMs: row.held_until - at }
      const count = Math.min(want, max - Number(sql.get(SQL.used).pluck().get(url, at)))
      if (count <= 0) return { taken: 0, heldMs: 0 }
      sql.get(SQL.take).run({ url, owner, count, now: at, until: at + leaseMs })
      return { taken: count, heldMs: 0 }
    })
    this.#takeTokens = (...args) => tokens.immediate(...args)
    this.#takeSlots = (...args) => slot.immediate(...args)
  }

  async takeTokens(url: string, want: number, intervalMs: number, burstMs: number): Promise<TokenGrant> {
    return this.#takeTokens(url, want, intervalMs, burstMs)
  }

  async takeSlots(url: string, owner: string, max: number, want: number, leaseMs: number): Promise<SlotGrant> {
    return this.#takeSlots(url, owner, max, want, leaseMs)
  }

  async returnSlots(url: string, owner: string, count: number): Promise<void> {
    this.#sql.get(SQL.give).run(count, url, owner)
  }

  async hold(url: string, ms: number): Promise<void> {
    this.#sql.get(SQL.hold).run({ url, until: this.#now() + ms })
  }

  async defer(owner: string, ids: readonly number[], waitMs: number, error: string): Promise<number[]> {
    if (ids.length === 0) return []
    const now = this.#now()
    return this.#sql
      .get(SQL.defer(ids.length))
      .pluck()
      .all(...ids, { owner, now, due: now + waitMs, error }) as number[]
  }

  async declare(limits: ReadonlyMap<string, { ratePerSecond?: number; maxInFlight?: number }>): Promise<void> {
    const statement = this.#sql.get(SQL.declare)
    for (const [url, limit] of limits) statement.run(url, limit.ratePerSecond ?? null, limit.maxInFlight ?? null)
  }

  async read(urls: readonly string[]): Promise<EndpointLimitState[]> {
    if (urls.length === 0) return []
    const rows = this.#sql.get(SQL.read(urls.length)).all(this.#now(), ...urls) as LimitRow[]
    return rows.map(toState)
  }
}

interface LimitRow {
  url: string
  ratePerSecond: number | null
  maxInFlight: number | null
  inFlight: number
  heldUntil: number
  tat: number
}

function toState(row: LimitRow): EndpointLimitState {
  return {
    url: row.url,
    ratePerSecond: row.ratePerSecond ?? undefined,
    maxInFlight: row.maxInFlight ?? undefined,
    inFlight: Number(row.inFlight),
    heldUntil: Number(row.heldUntil),
    tat: Number(row.tat),
  }
}
