import type { PoolClient } from 'pg'
import type {
  AuditRecord,
  AuditRow,
  ChangeResult,
  ExpectedRevision,
  PutResult,
  PutSource,
  SourceConfigStore,
  StoredSource,
  StoredWriteKey,
} from '../source-configs'
import { bumpVersion, readVersion } from './version-row'
import { type PostgresPool, transaction } from '../../kit/postgres/pool'
import { SPILL } from './delivery-blocks'

// The statements of the API sources' tables (their schema: ../source-configs-schema.ts). Every
// write bumps config_version first: its row lock makes concurrent writes (from any relay) take
// turns, so the revision checks that follow are never raced.
const SQL = {
  sources: `SELECT name, enabled, settings, revision, created_at AS "createdAt", updated_at AS "updatedAt"
    FROM api_sources ORDER BY name`,
  source: `SELECT name, enabled, settings, revision, created_at AS "createdAt", updated_at AS "updatedAt"
    FROM api_sources WHERE name = $1`,
  keys: `SELECT source, id, digest, prefix, created_at AS "createdAt" FROM api_write_keys
    WHERE $1::text IS NULL OR source = $1 ORDER BY created_at, id`,
  keyOf: 'SELECT 1 FROM api_write_keys WHERE source = $1 AND digest = $2',
  insert: `INSERT INTO api_sources (name, enabled, settings, revision, created_at, updated_at)
    VALUES ($1, $2, $3, $4, $5, $5)`,
  replace: 'UPDATE api_sources SET enabled = $2, settings = $3, revision = $4, updated_at = $5 WHERE name = $1',
  delete: 'DELETE FROM api_sources WHERE name = $1',
  deleteKeys: 'DELETE FROM api_write_keys WHERE source = $1',
  touch: 'UPDATE api_sources SET revision = $2, updated_at = $3 WHERE name = $1',
  addKey: 'INSERT INTO api_write_keys (id, source, digest, prefix, created_at) VALUES ($1, $2, $3, $4, $5)',
  deleteKey: 'DELETE FROM api_write_keys WHERE source = $1 AND id = $2',
  // Its pending deliveries could never be delivered: dead letters, retryable by hand once a source
  // of that name exists again.
  failPending: `UPDATE queue SET status = 'failed', last_error = $2, updated_at = $3, lease_until = NULL,
    lease_owner = NULL WHERE source = $1 AND status = 'pending'`,
  audit: 'INSERT INTO config_audit (at, actor, action, target, changes) VALUES ($1, $2, $3, $4, $5)',
  auditPage: `SELECT id, at, actor, action, target, changes FROM config_audit
    WHERE id < $1 ORDER BY id DESC LIMIT $2`,
}

interface Row {
  name: string
  enabled: boolean
  settings: string
  revision: string | number
  createdAt: string | number
  updatedAt: string | number
}

interface KeyRow {
  source: string
  id: string
  digest: string
  prefix: string
  createdAt: string | number
}

/** The {@link SourceConfigStore} on PostgreSQL, over the store's pool: shared by every relay on the database. */
export class PostgresSourceConfigs implements SourceConfigStore {
  readonly #pool: PostgresPool

  constructor(pool: PostgresPool) {
    this.#pool = pool
  }

  version(): Promise<number> {
    return readVersion(this.#pool, 'config_version')
  }

  async list(): Promise<StoredSource[]> {
    const [sources, keys] = await Promise.all([
      this.#pool.query<Row>(SQL.sources),
      this.#pool.query<KeyRow>(SQL.keys, [null]),
    ])
    return sources.rows.map((row) => storedSource(row, keys.rows))
  }

  async put(request: PutSource): Promise<PutResult> {
    return transaction(
      this.#pool,
      async (client): Promise<PutResult> => {
        const version = await bump(client)
        const existing = (await client.query<Row>(SQL.source, [request.name])).rows[0]
        if (!matches(existing, request.expected)) return rollback({ kind: 'stale' })
        if (existing !== undefined && request.keyDigest !== undefined) {
          const { rows } = await client.query(SQL.keyOf, [request.name, request.keyDigest])
          if (rows.length === 0) return rollback({ kind: 'unknown-key' })
        }
        const audit = request.audit(existing === undefined)
        if (existing === undefined) {
          await client.query(SQL.insert, [request.name, request.enabled, request.settings, version, audit.at])
        } else {
          await client.query(SQL.replace, [request.name, request.enabled, request.settings, version, audit.at])
        }
        if (request.newKey !== undefined) await insertKey(client, request.name, request.newKey)
        await insertAudit(client, audit)
        const row = (await client.query<Row>(SQL.source, [request.name])).rows[0]!
        const keys = (await client.query<KeyRow>(SQL.keys, [request.name])).rows
        return { kind: existing === undefined ? 'created' : 'replaced', source: storedSource(row, keys), version }
      },
      committed,
    )
  }

  async delete(name: string, expected: ExpectedRevision, reason: string, audit: AuditRecord): Promise<ChangeResult> {
    return transaction(
      this.#pool,
      async (client): Promise<ChangeResult> => {
        const version = await bump(client)
        const existing = (await client.query<Row>(SQL.source, [name])).rows[0]
        if (existing === undefined) return rollback({ kind: 'not-found' })
        if (!matches(existing, expected)) return rollback({ kind: 'stale' })
        await client.query(SQL.delete, [name])
        await client.query(SQL.deleteKeys, [name])
        await client.query(SPILL.ofSource, [name])
        await client.query(SQL.failPending, [name, reason, audit.at])
        await insertAudit(client, audit)
        return { kind: 'done', version }
      },
      committed,
    )
  }

  async addKey(source: string, key: StoredWriteKey, audit: AuditRecord): Promise<ChangeResult> {
    return this.#keyChange(source, audit, async (client) => {
      await insertKey(client, source, key)
      return true
    })
  }

  async deleteKey(source: string, id: string, audit: AuditRecord): Promise<ChangeResult> {
    return this.#keyChange(source, audit, async (client) => {
      const { rowCount } = await client.query(SQL.deleteKey, [source, id])
      return rowCount === 1
    })
  }

  async appendAudit(entry: AuditRecord): Promise<void> {
    await insertAudit(this.#pool, entry)
  }

  async audit(query: { before?: number | undefined; limit: number }): Promise<AuditRow[]> {
    const { rows } = await this.#pool.query<AuditRow & { id: string; at: string }>(SQL.auditPage, [
      query.before ?? Number.MAX_SAFE_INTEGER,
      query.limit,
    ])
    return rows.map((row) => ({ ...row, id: Number(row.id), at: Number(row.at) }))
  }

  #keyChange(
    source: string,
    audit: AuditRecord,
    change: (client: PoolClient) => Promise<boolean>,
  ): Promise<ChangeResult> {
    return transaction(
      this.#pool,
      async (client): Promise<ChangeResult> => {
        const version = await bump(client)
        if ((await client.query(SQL.source, [source])).rows.length === 0) return rollback({ kind: 'not-found' })
        if (!(await change(client))) return rollback({ kind: 'not-found' })
        await client.query(SQL.touch, [source, version, audit.at])
        await insertAudit(client, audit)
        return { kind: 'done', version }
      },
      committed,
    )
  }
}

// The answers that roll their transaction back.
const refused = new WeakSet<object>()

// Whether a transaction's answer is kept (not a refusal, which bumps no version).
const committed = (result: object): boolean => !refused.has(result)

function rollback<T extends object>(result: T): T {
  refused.add(result)
  return result
}

const bump = (client: PoolClient): Promise<number> => bumpVersion(client, 'config_version')

async function insertKey(client: PoolClient, source: string, key: StoredWriteKey): Promise<void> {
  await client.query(SQL.addKey, [key.id, source, key.digest, key.prefix, key.createdAt])
}

async function insertAudit(db: Pick<PoolClient, 'query'>, entry: AuditRecord): Promise<void> {
  await db.query(SQL.audit, [entry.at, entry.actor, entry.action, entry.target, entry.changes])
}

function storedSource(row: Row, keys: readonly KeyRow[]): StoredSource {
  return {
    name: row.name,
    enabled: row.enabled,
    settings: row.settings,
    revision: Number(row.revision),
    createdAt: Number(row.createdAt),
    updatedAt: Number(row.updatedAt),
    writeKeys: keys
      .filter((key) => key.source === row.name)
      .map((key) => ({ id: key.id, digest: key.digest, prefix: key.prefix, createdAt: Number(key.createdAt) })),
  }
}

function matches(existing: Row | undefined, expected: ExpectedRevision): boolean {
  if (expected === undefined) return true
  if (expected === null) return existing === undefined
  return existing !== undefined && Number(existing.revision) === expected
}
