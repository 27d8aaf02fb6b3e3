import type { Pool } from 'pg'
import type { SchemaChange, TableColumns } from '../schema/evolution'
import type { ColumnType } from '../schema/values'
import { isRaceLost } from './failures'
import { addColumns, columnTypeOf, createSchema, createTable, READ_COLUMNS, SCHEMA_EXISTS } from './sql'

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
      await this.#pool.query(createTable(this.#schema, change.table, change.add)).catch(ignoreRaceLost)
    }
    const names = changes.map((change) => change.table)
    let read = await this.#query(names)
    let altered = false
    for (const change of changes) {
      const have = read.get(change.table)
      const missing = new Map([...change.add].filter(([column]) => have?.has(column) !== true))
      if (missing.size === 0) continue
      await this.#pool.query(addColumns(this.#schema, change.table, missing))
      altered = true
    }
    if (altered) read = await this.#query(names)
    for (const name of names) tables.set(name, read.get(name) ?? new Map())
  }

  /** Drops what is cached: the next load reads the schema again (a table or column was not there). */
  forget(): void {
    this.#tables = undefined
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
    if (found.rowCount === 0) await this.#pool.query(createSchema(this.#schema)).catch(ignoreRaceLost)
  }
}

function typesOf(columns: ReadonlyMap<string, KnownColumn>): TableColumns {
  return new Map([...columns].map(([name, column]) => [name, column.type]))
}

function ignoreRaceLost(error: unknown): void {
  if (!isRaceLost(error)) throw error
}
