import { RelayError } from '../../errors'

/** What a file's listing shows beside its key and size, kept with the file when it is written. */
export interface FileMeta {
  /** How many messages the file holds. */
  messages: number
  /** The earliest and latest `receivedAt` in the file, ISO 8601. */
  first: string
  last: string
}

/** A file found in the store. */
export interface StoredFile {
  key: string
  bytes: number
}

/** Where the archive's files go: a local folder or an S3-compatible bucket. */
export interface ArchiveStore {
  /**
   * Writes a file that is visible only whole and durable once this resolves.
   * @throws {ArchiveStoreError} with the reason (a full disk, a store that is down or refuses).
   */
  put(key: string, body: Uint8Array, meta: FileMeta): Promise<void>
  /**
   * The earliest day (`YYYY-MM-DD`) of a source's folder, or `undefined` when it has none: a
   * window that reaches back years is listed from there, not from its start.
   */
  earliestDate(sourceFolder: string): Promise<string | undefined>
  /** Every archive file under a folder (its sub-folders included); none for a missing folder. */
  list(folder: string): Promise<StoredFile[]>
  /** The meta kept with a file, or `undefined` when none was kept (the reader then counts). */
  meta(key: string): Promise<FileMeta | undefined>
  /** A file's bytes. */
  read(key: string): Promise<Uint8Array>
  close(): Promise<void>
}

/**
 * The archive's store failed: `reason` says why in a few words (`disk full`, `unreachable`,
 * `HTTP 503 SlowDown`), the message adds the file; never a secret. `retryable` failures are tried
 * again on the usual schedule.
 */
export class ArchiveStoreError extends RelayError {
  readonly reason: string
  readonly retryable: boolean

  constructor(reason: string, message: string, options: { retryable: boolean; cause?: unknown }) {
    super('ERR_ARCHIVE_STORE', message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'ArchiveStoreError'
    this.reason = reason
    this.retryable = options.retryable
  }
}
