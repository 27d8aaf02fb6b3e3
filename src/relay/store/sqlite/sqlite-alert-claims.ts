import { randomUUID } from 'node:crypto'
import {
  ALERT_CLAIM_SQL as SQL,
  type AlertClaim,
  type AlertClaimRow,
  type AlertClaimStore,
  toAlertClaim,
} from '../alert-claims'
import type { StatementCache } from './statement-cache'

/** The {@link AlertClaimStore} on the relay's SQLite database (shared by `--workers` processes). */
export class SqliteAlertClaims implements AlertClaimStore {
  readonly #sql: StatementCache

  constructor(sql: StatementCache) {
    this.#sql = sql
  }

  async deadLettered(url: string, now: number, interval: number): Promise<AlertClaim> {
    return this.#run(SQL.deadLettered, url, now, interval)
  }

  async flush(url: string, now: number, interval: number): Promise<AlertClaim> {
    return this.#run(SQL.flush, url, now, interval)
  }

  async prune(before: number): Promise<number> {
    return this.#sql.get(SQL.prune).run({ before }).changes
  }

  #run(text: string, url: string, now: number, interval: number): AlertClaim {
    const token = randomUUID()
    const row = this.#sql.get(text).get({ url, now, interval, token }) as AlertClaimRow | undefined
    return toAlertClaim(row, token, now)
  }
}
