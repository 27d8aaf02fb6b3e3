/** The reason a removed source's pending deliveries fail with (the admin API's `DELETE`). */
export const SOURCE_REMOVED = 'source removed'

/**
 * A source created through the admin API, as the store keeps it. `settings` is opaque JSON to the
 * store (the source's destinations and schema, each secret in it encrypted by the relay before it
 * gets here).
 */
export interface StoredSource {
  name: string
  enabled: boolean
  settings: string
  /** The configuration version at its last write: what its `ETag` is made of. */
  revision: number
  createdAt: number
  updatedAt: number
  writeKeys: StoredWriteKey[]
}

/** One live write key of a stored source: its SHA-256 digest (hex), never the key itself. */
export interface StoredWriteKey {
  id: string
  digest: string
  /** The key's first characters, to tell keys apart in a listing. */
  prefix: string
  createdAt: number
}

/** Who made a change: the admin token, the read token (never, it writes nothing), or the config file. */
export type AuditActor = 'admin' | 'read' | 'file'

/** What a change did (docs/relay.md, "Audit"). */
export type AuditAction =
  | 'source.created'
  | 'source.replaced'
  | 'source.deleted'
  | 'write-key.created'
  | 'write-key.deleted'
  | 'config.reloaded'
  | 'suppression.added'
  | 'suppression.removed'

/** One entry of the audit log; `changes` is JSON with every secret masked. */
export interface AuditRecord {
  at: number
  actor: AuditActor
  action: AuditAction
  target: string
  changes: string
}

/** An audit entry as read back, with its id (the page cursor). */
export interface AuditRow extends AuditRecord {
  id: number
}

/**
 * What a write expects of the source it changes: `undefined` expects nothing, `null` that there
 * is none, a number that its revision is that one (`If-Match`).
 */
export type ExpectedRevision = number | null | undefined

/** {@link SourceConfigStore.put}'s request. */
export interface PutSource {
  name: string
  enabled: boolean
  settings: string
  expected: ExpectedRevision
  /** A key to add with the source (a source created without a key gets one). */
  newKey?: StoredWriteKey | undefined
  /** When replacing: the key the body named must be one of the source's (by digest). */
  keyDigest?: string | undefined
  audit: (created: boolean) => AuditRecord
}

/** What a write came to. `stale`: the revision expected is not the source's (412). */
export type PutResult =
  | { kind: 'created' | 'replaced'; source: StoredSource; version: number }
  | { kind: 'stale' }
  | { kind: 'unknown-key' }

/** What a write to an existing source came to. */
export type ChangeResult = { kind: 'done'; version: number } | { kind: 'not-found' } | { kind: 'stale' }

/**
 * Sources created through the admin API, their write keys and the audit log of every change, kept
 * in the relay's database so that every relay on it shares them. Each write is one transaction
 * that also appends its audit entry and bumps the configuration version; a failed write changes
 * nothing.
 */
export interface SourceConfigStore {
  /** The configuration version: bumped by every write. One cheap read, for polling. */
  version(): Promise<number>
  /** Every stored source with its write keys, by name. */
  list(): Promise<StoredSource[]>
  /** Creates or replaces a source. */
  put(request: PutSource): Promise<PutResult>
  /**
   * Deletes a source and its keys, and fails its pending deliveries with `reason` (they could
   * never be delivered), in one transaction.
   */
  delete(name: string, expected: ExpectedRevision, reason: string, audit: AuditRecord): Promise<ChangeResult>
  /** Adds a write key to a source. */
  addKey(source: string, key: StoredWriteKey, audit: AuditRecord): Promise<ChangeResult>
  /** Deletes one of a source's write keys. */
  deleteKey(source: string, id: string, audit: AuditRecord): Promise<ChangeResult>
  /** Appends an audit entry of a change made elsewhere (a reload of the config file), bumping nothing. */
  appendAudit(entry: AuditRecord): Promise<void>
  /** A page of the audit log, newest first, below the id `before` when given. */
  audit(query: { before?: number | undefined; limit: number }): Promise<AuditRow[]>
}
