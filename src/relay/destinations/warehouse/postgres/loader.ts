import type { Pool, PoolClient } from 'pg'
import { redact } from '../../../kit/postgres/pool'
import { changesFor, type CoercedRow, coerceRow, mergeUpserts } from '../schema/evolution'
import { rowsOf, type TableRow } from '../schema/rows'
import type { MessageOutcome, OutboundMessage } from '../types'
import type { PostgresCatalog } from './catalog'
import { type FailureKind, failureKind } from './failures'
import { arrayLiteral, type InsertColumn, insertRows, POSTGRES_RESERVED_COLUMNS } from './sql'

/** What the loader needs besides its pool and catalog. */
export interface LoaderOptions {
  /** The warehouse's URL, only to keep its password out of error texts. */
  readonly url: string
  /** The schema's name, an identifier. */
  readonly schema: string
  /** The clock of `uuid_ts`. */
  readonly now?: () => Date
}

const DELIVERED: MessageOutcome = Object.freeze({ kind: 'delivered' })

/** A statement that failed, with how its failure is taken (failures.ts). */
class LoadFailure extends Error {
  readonly kind: FailureKind
  constructor(kind: FailureKind, message: string, cause: unknown) {
    super(message, { cause })
    this.kind = kind
  }
}

/**
 * Loads batches of messages into one schema of a PostgreSQL warehouse (docs/warehouse.md,
 * "Loads"): the tables and columns the batch needs first (outside the load's transaction), then
 * every row in one transaction, one statement per table. A load that fails for the data's sake
 * is tried again one message at a time, so only the message at fault fails.
 */
export class PostgresLoader {
  readonly #pool: Pool
  readonly #catalog: PostgresCatalog
  readonly #options: LoaderOptions

  constructor(pool: Pool, catalog: PostgresCatalog, options: LoaderOptions) {
    this.#pool = pool
    this.#catalog = catalog
    this.#options = options
  }

  /** Loads `batch`; one outcome per message, in order. Never rejects. */
  async load(batch: readonly OutboundMessage[]): Promise<MessageOutcome[]> {
    const loadedAt = (this.#options.now?.() ?? new Date()).toISOString()
    const outcomes: MessageOutcome[] = new Array(batch.length)
    const pending: { index: number; rows: TableRow[] }[] = []
    batch.forEach((item, index) => {
      // received_at comes from the message itself: ingest stamps `receivedAt` on each.
      const rows = rowsOf(item.message, { loadedAt }, POSTGRES_RESERVED_COLUMNS)
      const refused = refusedValue(rows)
      if (refused === undefined) pending.push({ index, rows })
      else outcomes[index] = this.#failed(false, refused)
    })
    if (pending.length === 0) return outcomes
    try {
      const done = await this.#attempt(pending.map((entry) => entry.rows))
      for (const [at, entry] of pending.entries()) outcomes[entry.index] = done[at]!
    } catch (error) {
      const failure = error as LoadFailure
      if (failure.kind !== 'data' || pending.length === 1) {
        for (const entry of pending) outcomes[entry.index] = this.#failed(failure.kind !== 'data', failure.message)
      } else {
        for (const entry of pending) outcomes[entry.index] = await this.#alone(entry.rows)
      }
    }
    return outcomes
  }

  // One message in a load of its own: delivered, or failed for its own sake or the warehouse's.
  async #alone(rows: TableRow[]): Promise<MessageOutcome> {
    try {
      return (await this.#attempt([rows]))[0]!
    } catch (error) {
      const failure = error as LoadFailure
      return this.#failed(failure.kind !== 'data', failure.message)
    }
  }

  /** Writes every message's rows in one transaction; their outcomes, or a LoadFailure. */
  async #attempt(messages: readonly TableRow[][]): Promise<MessageOutcome[]> {
    const coerced = await this.#step('prepare the tables for', () => this.#prepare(messages))
    const byTable = new Map<string, CoercedRow[]>()
    for (const rows of coerced) {
      for (const row of rows) {
        const list = byTable.get(row.table)
        if (list === undefined) byTable.set(row.table, [row])
        else list.push(row)
      }
    }
    await this.#step('load', () => this.#write(byTable))
    return coerced.map((rows) => {
      const conflicts = rows.flatMap((row) => row.conflicts)
      return conflicts.length === 0 ? DELIVERED : { kind: 'delivered', detail: { conflicts } }
    })
  }

  // The schema brought up to date for these rows, and each row cast to its columns' types.
  async #prepare(messages: readonly TableRow[][]): Promise<CoercedRow[][]> {
    const known = await this.#catalog.columns()
    await this.#catalog.apply(changesFor(messages.flat(), known))
    const columns = await this.#catalog.columns()
    return messages.map((rows) => rows.map((row) => coerceRow(row, columns.get(row.table) ?? new Map())))
  }

  async #write(byTable: ReadonlyMap<string, CoercedRow[]>): Promise<void> {
    const client = await this.#pool.connect()
    client.on('error', ignoreError)
    let failed: unknown
    try {
      await client.query('BEGIN')
      // Tables in name order, as the schema changes are: two loads lock them in one order.
      for (const table of [...byTable.keys()].sort()) await this.#writeTable(client, table, byTable.get(table)!)
      await client.query('COMMIT')
    } catch (error) {
      failed = error
      await client.query('ROLLBACK').catch(() => {})
      throw error
    } finally {
      client.off('error', ignoreError)
      client.release(failed !== undefined)
    }
  }

  async #writeTable(client: PoolClient, table: string, rows: readonly CoercedRow[]): Promise<void> {
    const mode = rows[0]!.mode
    const written = mode === 'upsert' ? mergeUpserts(rows) : rows
    const known = this.#catalog.known(table)!
    const present = new Set<string>()
    for (const row of written) for (const name of row.values.keys()) present.add(name)
    const columns: InsertColumn[] = [...known]
      .filter(([name]) => present.has(name))
      .map(([name, column]) => ({ name, sqlType: column.sqlType }))
    const values = columns.map((column) => arrayLiteral(written.map((row) => row.values.get(column.name) ?? null)))
    await client.query(insertRows(this.#options.schema, table, columns, mode), values)
  }

  async #step<T>(doing: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work()
    } catch (error) {
      const kind = failureKind(error)
      if (kind === 'stale') this.#catalog.forget()
      const reason = error instanceof Error ? error.message || error.name : String(error)
      throw new LoadFailure(kind, `cannot ${doing} the warehouse: ${redact(reason, this.#options.url)}`, error)
    }
  }

  #failed(retryable: boolean, error: string): MessageOutcome {
    return { kind: 'failed', retryable, error }
  }
}

/**
 * Why PostgreSQL could hold none of a message's rows, or `undefined`: a string with a NUL
 * character, which no `text` can hold (in a key it is only a character of the name; in an array,
 * loaded as JSON text, it is written `\u0000`).
 */
function refusedValue(rows: readonly TableRow[]): string | undefined {
  for (const row of rows) {
    for (const [column, value] of row.values) {
      if (typeof value === 'string' && value.includes('\u0000'))
        return `${row.table}.${column} holds a NUL character, which PostgreSQL text cannot hold`
    }
  }
  return undefined
}

// The statement it belongs to fails with the same error, and that is where it is handled.
function ignoreError(): void {}
