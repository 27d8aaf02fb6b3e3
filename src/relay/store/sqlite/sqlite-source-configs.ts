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
import { versionStatements } from '../version-row'
import type { StatementCache } from './statement-cache'

// The statements of the API sources' tables (their schema: ../source-configs-schema.ts).
const SQL = {
  ...versionStatements('config_version'),
  sources: `SELECT name, enabled, settings, revision, created_at AS createdAt, updated_at AS updatedAt
    FROM api_sources ORDER BY name`,
  source: `SELECT name, enabled, settings, revision, created_at AS createdAt, updated_at AS updatedAt
    FROM api_sources WHERE name = ?`,
  keys: 'SELECT source, id, digest, prefix, created_at AS createdAt FROM api_write_keys ORDER BY created_at, id',
  keyOf: 'SELECT 1 FROM api_write_keys WHERE source = ? AND digest = ?',
  insert: `INSERT INTO api_sources (name, enabled, settings, revision, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?)`,
  replace: 'UPDATE api_sources SET enabled = ?, settings = ?, revision = ?, updated_at = ? WHERE name = ?',
  delete: 'DELETE FROM api_sources WHERE name = ?',
  deleteKeys: 'DELETE FROM api_write_keys WHERE source = ?',
  touch: 'UPDATE api_sources SET revision = ?, updated_at = ? WHERE name = ?',
  addKey: 'INSERT INTO api_write_keys (id, source, digest, prefix, created_at) VALUES (?, ?, ?, ?, ?)',
  deleteKey: 'DELETE FROM api_write_keys WHERE source = ? AND id = ?',
  // Its pending deliveries could never be delivered: dead letters, retryable by hand once a source
  // of that name exists again.
  failPending: `UPDATE deliveries SET status = 'failed', last_error = ?, updated_at = ?, lease_until = NULL,
    lease_owner = NULL WHERE source = ? AND status = 'pending'`,
  audit: 'INSERT INTO config_audit (at, actor, action, target, changes) VALUES (?, ?, ?, ?, ?)',
  auditPage: `SELECT id, at, actor, action, target, changes FROM config_audit
    WHERE id < ? ORDER BY id DESC LIMIT ?`,
}

type SourceRow = Omit<StoredSource, 'enabled' | 'writeKeys'> & { enabled: number }

/** The {@link SourceConfigStore} on the relay's SQLite file, shared by the `--workers` processes on it. */
export class SqliteSourceConfigs implements SourceConfigStore {
  readonly #sql: StatementCache

  constructor(sql: StatementCache) {
    this.#sql = sql
  }

  async version(): Promise<number> {
    return this.#sql.get(SQL.version).pluck().get() as number
  }

  async list(): Promise<StoredSource[]> {
    const keys = new Map<string, StoredWriteKey[]>()
    for (const row of this.#sql.get(SQL.keys).all() as (StoredWriteKey & { source: string })[]) {
      const { source, ...key } = row
      keys.set(source, [...(keys.get(source) ?? []), key])
    }
    return (this.#sql.get(SQL.sources).all() as SourceRow[]).map((row) => ({
      ...row,
      enabled: row.enabled === 1,
      writeKeys: keys.get(row.name) ?? [],
    }))
  }

  async put(request: PutSource): Promise<PutResult> {
    return this.#sql.db
      .transaction((): PutResult => {
        const existing = this.#sql.get(SQL.source).get(request.name) as SourceRow | undefined
        if (!matches(existing?.revision, request.expected)) return { kind: 'stale' }
        if (existing !== undefined && request.keyDigest !== undefined) {
          if (this.#sql.get(SQL.keyOf).get(request.name, request.keyDigest) === undefined)
            return { kind: 'unknown-key' }
        }
        const version = this.#bump()
        const audit = request.audit(existing === undefined)
        const enabled = request.enabled ? 1 : 0
        if (existing === undefined) {
          this.#sql.get(SQL.insert).run(request.name, enabled, request.settings, version, audit.at, audit.at)
        } else {
          this.#sql.get(SQL.replace).run(enabled, request.settings, version, audit.at, request.name)
        }
        if (request.newKey !== undefined) this.#insertKey(request.name, request.newKey)
        this.#audit(audit)
        const source = this.#sql.get(SQL.source).get(request.name) as SourceRow
        const keys = (this.#sql.get(SQL.keys).all() as (StoredWriteKey & { source: string })[])
          .filter((k) => k.source === request.name)
          .map(({ source: _source, ...key }) => key)
        return {
          kind: existing === undefined ? 'created' : 'replaced',
          source: { ...source, enabled: source.enabled === 1, writeKeys: keys },
          version,
        }
      })
      .immediate()
  }

  async delete(name: string, expected: ExpectedRevision, reason: string, audit: AuditRecord): Promise<ChangeResult> {
    return this.#sql.db
      .transaction((): ChangeResult => {
        const existing = this.#sql.get(SQL.source).get(name) as SourceRow | undefined
        if (existing === undefined) return { kind: 'not-found' }
        if (!matches(existing.revision, expected)) return { kind: 'stale' }
        const version = this.#bump()
        this.#sql.get(SQL.delete).run(name)
        this.#sql.get(SQL.deleteKeys).run(name)
        this.#sql.get(SQL.failPending).run(reason, audit.at, name)
        this.#audit(audit)
        return { kind: 'done', version }
      })
      .immediate()
  }

  async addKey(source: string, key: StoredWriteKey, audit: AuditRecord): Promise<ChangeResult> {
    return this.#keyChange(source, audit, () => {
      this.#insertKey(source, key)
      return true
    })
  }

  async deleteKey(source: string, id: string, audit: AuditRecord): Promise<ChangeResult> {
    return this.#keyChange(source, audit, () => this.#sql.get(SQL.deleteKey).run(source, id).changes === 1)
  }

  async appendAudit(entry: AuditRecord): Promise<void> {
    this.#audit(entry)
  }

  async audit(query: { before?: number | undefined; limit: number }): Promise<AuditRow[]> {
    return this.#sql.get(SQL.auditPage).all(query.before ?? Number.MAX_SAFE_INTEGER, query.limit) as AuditRow[]
  }

  // A key added or deleted changes the source's revision (its listing shows the keys). Writes
  // take the lock at once (IMMEDIATE): `--workers` processes write the same file.
  async #keyChange(source: string, audit: AuditRecord, change: () => boolean): Promise<ChangeResult> {
    try {
      return this.#sql.db
        .transaction((): ChangeResult => {
          if (this.#sql.get(SQL.source).get(source) === undefined) return { kind: 'not-found' }
          const version = this.#bump()
          if (!change()) throw new KeyNotFound()
          this.#sql.get(SQL.touch).run(version, audit.at, source)
          this.#audit(audit)
          return { kind: 'done', version }
        })
        .immediate()
    } catch (error) {
      if (error instanceof KeyNotFound) return { kind: 'not-found' }
      throw error
    }
  }

  #bump(): number {
    return this.#sql.get(SQL.bump).pluck().get() as number
  }

  #insertKey(source: string, key: StoredWriteKey): void {
    this.#sql.get(SQL.addKey).run(key.id, source, key.digest, key.prefix, key.createdAt)
  }

  #audit(entry: AuditRecord): void {
    this.#sql.get(SQL.audit).run(entry.at, entry.actor, entry.action, entry.target, entry.changes)
  }
}

// Thrown inside a transaction to roll it back: the key named is not the source's.
class KeyNotFound extends Error {}

function matches(revision: number | undefined, expected: ExpectedRevision): boolean {
  if (expected === undefined) return true
  if (expected === null) return revision === undefined
  return revision === expected
}
