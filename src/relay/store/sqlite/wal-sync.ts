import { close, fdatasync, openSync } from 'node:fs'
import { promisify } from 'node:util'
import { databaseFile } from './database-file'
import type { SqliteDatabase } from './schema'

const datasync = promisify(fdatasync)
const closeFd = promisify(close)

/** What {@link WalSync} needs of an open file: Node's `FileHandle` has both. */
export interface SyncableFile {
  datasync(): Promise<void>
  close(): Promise<void>
}

/**
 * Waits for the disk on behalf of commits made with `synchronous = NORMAL` in WAL mode, off the
 * event loop. Such a commit has written its frames to the WAL file but not flushed them; with
 * `synchronous = FULL` SQLite would call fdatasync on the WAL right there, on the calling thread —
 * better-sqlite3's thread is the relay's only one, so every commit stopped all the relay's work
 * for the disk's flush (1–4 ms on a shared disk). {@link durable} runs that same fdatasync, on the
 * same file, through libuv's thread pool: the relay parses the next requests while the disk
 * flushes, and a caller answers 2xx only once the flush that covers its commit returned.
 *
 * Flushes coalesce: a call while one runs waits for the next, which starts when the running one
 * ends and covers every commit made meanwhile (a flush only covers what was written before it
 * started). A checkpoint or a restart of the WAL by any connection meanwhile loses nothing: SQLite
 * flushes the WAL before it checkpoints and the database file after, and restarts the WAL only
 * once a checkpoint is complete. The WAL is never deleted while this connection is open.
 */
export class WalSync {
  readonly #file: SyncableFile
  /** The flush running now, if any. */
  #running: Promise<void> | undefined
  /** The flush that starts when the running one ends, which the calls made meanwhile wait for. */
  #next: Promise<void> | undefined

  /**
   * Flushes for `db` through its WAL file, opened now; `undefined` when there is none to open (an
   * in-memory database, another journal mode, a WAL that cannot be opened): the caller then commits
   * with `synchronous = FULL`, waiting on its thread as before, never without waiting.
   */
  static open(db: SqliteDatabase): WalSync | undefined {
    try {
      if (db.memory || db.pragma('journal_mode', { simple: true }) !== 'wal') return undefined
      const file = databaseFile(db)
      if (file === undefined) return undefined
      const fd = openSync(`${file}-wal`, 'r+')
      return new WalSync({ datasync: () => datasync(fd), close: () => closeFd(fd) })
    } catch {
      return undefined
    }
  }

  /** Flushes `file`, the WAL (an open file of its own, closed by {@link close}). */
  constructor(file: SyncableFile) {
    this.#file = file
  }

  /** Resolves once every commit made before this call is on disk; rejects if the flush failed. */
  durable(): Promise<void> {
    if (this.#running === undefined) return this.#start()
    this.#next ??= this.#running
      .catch(() => {})
      .then(() => {
        this.#next = undefined
        return this.#start()
      })
    return this.#next
  }

  /** Waits for the flushes under way, then closes the file. */
  async close(): Promise<void> {
    await Promise.allSettled([this.#running, this.#next])
    await this.#file.close()
  }

  #start(): Promise<void> {
    const running = this.#file.datasync()
    this.#running = running
    void running
      .catch(() => {})
      .finally(() => {
        if (this.#running === running) this.#running = undefined
      })
    return running
  }
}
