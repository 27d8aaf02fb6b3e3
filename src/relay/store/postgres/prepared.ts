import type { QueryConfig } from 'pg'
import { POSTGRES_STATEMENTS as SQL, type PostgresStatement } from './statements'

/** A statement on a hot path, named: each connection parses and plans it once. */
export function prepared(name: PreparedStatement, values: unknown[]): QueryConfig {
  return { name: `tracklet-${name}`, text: SQL[name], values }
}

/** The statements whose text is fixed (not made from a filter): only these are prepared by name. */
export type PreparedStatement = {
  [K in PostgresStatement]: (typeof SQL)[K] extends string ? K : never
}[PostgresStatement]
