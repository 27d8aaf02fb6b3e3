import { randomUUID } from 'node:crypto'
import {
  ALERT_CLAIM_SQL,
  type AlertClaim,
  type AlertClaimRow,
  type AlertClaimStore,
  toAlertClaim,
} from '../alert-claims'
import type { Queryable } from './postgres-circuits'

// The shared statements with PostgreSQL's numbered, typed parameters.
const PARAMETERS: Record<string, string> = {
  url: '$1::text',
  now: '$2::bigint',
  interval: '$3::bigint',
  token: '$4::text',
  before: '$1::bigint',
}
const SQL = {
  deadLettered: numbered(ALERT_CLAIM_SQL.deadLettered),
  flush: numbered(ALERT_CLAIM_SQL.flush),
  prune: numbered(ALERT_CLAIM_SQL.prune),
}

/**
 * The {@link AlertClaimStore} on PostgreSQL, over the store's pool: every relay on the database
 * claims the same rows, each claim one statement (so it needs no transaction).
 */
export class PostgresAlertClaims implements AlertClaimStore {
  readonly #db: Queryable

  constructor(db: Queryable) {
    this.#db = db
  }

  async deadLettered(url: string, now: number, interval: number): Promise<AlertClaim> {
    return this.#run(SQL.deadLettered, url, now, interval)
  }

  async flush(url: string, now: number, interval: number): Promise<AlertClaim> {
    return this.#run(SQL.flush, url, now, interval)
  }

  async prune(before: number): Promise<number> {
    return (await this.#db.query(`${SQL.prune} RETURNING 1`, [before])).rows.length
  }

  async #run(text: string, url: string, now: number, interval: number): Promise<AlertClaim> {
    const token = randomUUID()
    const { rows } = await this.#db.query(text, [url, now, interval, token])
    return toAlertClaim(rows[0] as AlertClaimRow | undefined, token, now)
  }
}

function numbered(text: string): string {
  return text.replace(/:(url|now|interval|token|before)\b/g, (_, name: string) => PARAMETERS[name]!)
}
