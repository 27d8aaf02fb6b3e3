import type { PoolClient } from 'pg'
import {
  type AddSuppressions,
  EVERY_SOURCE,
  type RemoveSuppression,
  type Suppression,
  type SuppressionChange,
  type SuppressionStore,
} from '../suppressions'
import type { AuditRecord } from '../source-configs'
import { type PostgresPool, transaction } from '../../kit/postgres/pool'
import { bumpVersion, readVersion } from './version-row'

// The statements of the suppressions' tables (their schema: ./suppressions-schema.ts). A write
// that changes something bumps the version last, in its transaction.
const SQL = {
  list: 'SELECT user_id AS "userId", source, at FROM suppressions ORDER BY at, user_id, source',
  // One statement for up to 5,000 ids: those already suppressed there are left as they were.
  insert: `INSERT INTO suppressions (user_id, source, at)
    SELECT id, $2, $3 FROM unnest($1::text[]) AS id
    ON CONFLICT (user_id, source) DO NOTHING RETURNING user_id`,
  removeOne: 'DELETE FROM suppressions WHERE user_id = $1 AND source = $2 RETURNING source',
  removeAll: 'DELETE FROM suppressions WHERE user_id = $1 RETURNING source',
  audit: `INSERT INTO config_audit (at, actor, action, target, changes)
    SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[])`,
}

interface Row {
  userId: string
  source: string
  at: string | number
}

/** The {@link SuppressionStore} on PostgreSQL, over the store's pool: shared by every relay on the database. */
export class PostgresSuppressions implements SuppressionStore {
  readonly #pool: PostgresPool

  constructor(pool: PostgresPool) {
    this.#pool = pool
  }

  version(): Promise<number> {
    return readVersion(this.#pool, 'suppression_version')
  }

  async list(): Promise<Suppression[]> {
    const { rows } = await this.#pool.query<Row>(SQL.list)
    return rows.map(({ userId, source, at }) =>
      source === EVERY_SOURCE ? { userId, at: Number(at) } : { userId, source, at: Number(at) },
    )
  }

  async add({ userIds, source, at, audit }: AddSuppressions): Promise<SuppressionChange> {
    return transaction(this.#pool, async (client) => {
      const { rows } = await client.query<{ user_id: string }>(SQL.insert, [
        [...new Set(userIds)],
        source ?? EVERY_SOURCE,
        at,
      ])
      return finish(
        client,
        rows.map((row) => audit(row.user_id)),
      )
    })
  }

  async remove({ userId, source, audit }: RemoveSuppression): Promise<SuppressionChange> {
    return transaction(this.#pool, async (client) => {
      const { rows } =
        source === undefined
          ? await client.query<{ source: string }>(SQL.removeAll, [userId])
          : await client.query<{ source: string }>(SQL.removeOne, [userId, source])
      return finish(
        client,
        rows.map((row) => audit(row.source === EVERY_SOURCE ? undefined : row.source)),
      )
    })
  }
}

// The audit entries of a write, then its version: bumped only when something changed.
async function finish(client: PoolClient, entries: readonly AuditRecord[]): Promise<SuppressionChange> {
  if (entries.length === 0) return { changed: 0, version: await readVersion(client, 'suppression_version') }
  await client.query(SQL.audit, [
    entries.map((e) => e.at),
    entries.map((e) => e.actor),
    entries.map((e) => e.action),
    entries.map((e) => e.target),
    entries.map((e) => e.changes),
  ])
  return { changed: entries.length, version: await bumpVersion(client, 'suppression_version') }
}
