import { type VersionTable, versionStatements } from '../version-row'

// What runs a statement: the pool, or a transaction's client.
interface Queryable {
  query<R>(text: string): Promise<{ rows: R[] }>
}

/** The version of `table` now (0 before any write). */
export async function readVersion(db: Queryable, table: VersionTable): Promise<number> {
  const { rows } = await db.query<{ version: string }>(versionStatements(table).version)
  return Number(rows[0]?.version ?? 0)
}

/** Bumps the version of `table` in the transaction of `client`; resolves with the new one. */
export async function bumpVersion(client: Queryable, table: VersionTable): Promise<number> {
  const { rows } = await client.query<{ version: string }>(versionStatements(table).bump)
  return Number(rows[0]!.version)
}
