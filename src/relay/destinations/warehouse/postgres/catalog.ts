import type { Pool } from 'pg'
import type { SchemaChange, TableColumns } from '../schema/evolution'
import type { ColumnType } from '../schema/values'
import { isRaceLost } from './failures'
import { addColumns, columnTypeOf, createSchema, createTable, READ_COLUMNS, SCHEMA_EXISTS } from './sql'

/**
 * The longest a schema change waits for its table's lock, ms. `ALTER TABLE` needs the table to
 * itself: while it waits (behind a dashboard's long query, say), every other query of the table
 * queues behind it. Past this it gives up, and the load is retried later (a lock not available
 * is the warehouse's fault, not the data's).
 */
export const DDL_LOCK_TIMEOUT_MS = 5000

/** A column as the warehouse has it: its kind, and its type as PostgreSQL spells it. */
export interface KnownColumn {
  readonly type: ColumnType
  readonly sqlType: string
}

/**
 * What one schema's tables look like, read from the warehouse once and kept: a load asks the
 * database only when it needs a table or column the cache lacks. Then it creates or adds it (`IF
 * NOT EXISTS`: another relay may just have) and reads those tables again, so a column another relay
 * added, perhaps with another type, is learnt as the warehouse has it.
 */
export class PostgresCatalog {
  /** The pool of the warehouse's connections. */
  readonly #pool: Pool
  /** The schema's name, an identifier. */
  readonly #schema: string
  /** Table → column → what it is; `undefined` until first read (and after {@link forget}). */
  #tables: Map<string, Map<string, KnownColumn>> | undefined

  constructor(pool: Pool, schema: string) {
    this.#pool = pool
    this.#schema = schema
  }

  /** Every table's columns (types only), reading the schema on first use. */
  async columns(): Promise<ReadonlyMap<string, TableColumns>> {
    const tables = await this.#read()
    return new Map([...tables].map(([name, columns]) => [name, typesOf(columns)]))
  }

  /** A table's columns with their SQL types, as last read; `undefined` for a table not seen. */
  known(table: string): ReadonlyMap<string, KnownColumn> | undefined {
    return this.#tables?.get(table)
  }

  /**
   * Creates the tables and adds the columns of `changes`, then reads those tables again. A column
   * is added only when the table read after the creates still lacks it: `ALTER TABLE` waits for
   * every load writing to the table, `CREATE TABLE IF NOT EXISTS` for none.
   */
  async apply(changes: readonly SchemaChange[]): Promise<void> {
    if (changes.length === 0) return
    const tables = await this.#read()
    const creates = changes.filter((change) => change.create)
    if (creates.length > 0) await this.#ensureSchema()
    for (const change of creates) {
      await this.#change(createTable(this.#schema, change.table, change.add)).catch(ignoreRaceLost)
    }
    const names = changes.map((change) => change.table)
    let read = await this.#query(names)
    let altered = false
    for (const change of changes) {
      const have = read.get(change.table)
      const missing = new Map([...change.add].filter(([column]) => have?.has(column) !== true))
      if (missing.size === 0) continue
      await this.#change(addColumns(this.#schema, change.table, missing))
      altered = true
    }
    if (altered) read = await this.#query(names)
    for (const name of names) tables.set(name, read.get(name) ?? new Map())
  }

  /** Drops what is cached: the next load reads the schema again (a table or column was gone). */
  forget(): void {
    this.#tables = undefined
  }

  /** Runs a schema change in its own transaction, waiting at most DDL_LOCK_TIMEOUT_MS for locks. */
  async #change(statement: string): Promise<void> {
    const client = await this.#pool.connect()
    client.on('error', ignoreError)
    let failed: unknown
    try {
      await client.query('BEGIN')
      await client.query(`SET LOCAL lock_timeout = ${DDL_LOCK_TIMEOUT_MS}`)
      await client.query(statement)
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

  async #read(): Promise<Map<string, Map<string, KnownColumn>>> {
    if (this.#tables === undefined) this.#tables = await this.#query(null)
    return this.#tables
  }

  async #query(tables: readonly string[] | null): Promise<Map<string, Map<string, KnownColumn>>> {
    const result = await this.#pool.query<{ table: string; column: string; type: string }>(READ_COLUMNS, [
      this.#schema,
      tables,
    ])
    const read = new Map<string, Map<string, KnownColumn>>()
    for (const row of result.rows) {
      const columns = read.get(row.table) ?? new Map<string, KnownColumn>()
      read.set(row.table, columns)
      columns.set(row.column, { type: columnTypeOf(row.type), sqlType: row.type })
    }
    return read
  }

  // Checked before it is created: CREATE SCHEMA IF NOT EXISTS needs CREATE on the database even
  // when the schema exists, and a loader's role may have rights on its schema only.
  async #ensureSchema(): Promise<void> {
    const found = await this.#pool.query(SCHEMA_EXISTS, [this.#schema])
    if (found.rowCount === 0) await this.#change(createSchema(this.#schema)).catch(ignoreRaceLost)
  }
}

function typesOf(columns: ReadonlyMap<string, KnownColumn>): TableColumns {
  return new Map([...columns].map(([name, column]) => [name, column.type]))
}

function ignoreRaceLost(error: unknown): void {
  if (!isRaceLost(error)) throw error
}

// The statement it belongs to fails with the same error, and that is where it is handled.
function ignoreError(): void {}
