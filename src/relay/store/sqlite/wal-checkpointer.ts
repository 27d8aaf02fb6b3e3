import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'
import { log } from '../../log'
import { databaseFile } from './database-file'
import type { SqliteDatabase } from './schema'

/**
 * Deliveries the store enqueues before its checkpoints move to a thread: a relay that takes this
 * few keeps a small WAL, and SQLite's own checkpoints on it cost little (and no thread is started
 * for each of the tests' stores).
 */
export const CHECKPOINT_THREAD_AFTER = 1000

/**
 * The WAL's length, in pages, at which the store's own connection checkpoints again while the
 * thread checkpoints (SQLite's `wal_autocheckpoint`): only if the thread falls behind, so the WAL
 * stays bounded (64 MiB of 4 KiB pages). SQLite's default, 1000, is its value before the thread.
 */
export const OWN_CHECKPOINT_PAGES = 16_384

/**
 * The least time between two of the thread's checkpoints, in ms. Back to back, a page that every
 * commit dirties (an index's, under random message ids) was copied into the file once a commit;
 * a checkpoint every so often copies it once for all the commits between.
 */
export const CHECKPOINT_INTERVAL_MS = 200

/**
 * How long the thread's second step may wait (ms) for a write to end, then for readers to leave
 * the WAL; the relay's writes wait for it meanwhile, so it is short. Past it, the WAL is restarted
 * at a later checkpoint (a long read, such as another process's, only delays that).
 */
const RESTART_WAIT_MS = 25

// The thread, as CommonJS source for `new Worker(…, { eval: true })` (the same text runs from the
// built package and from the sources under the test runner): its own connection to the file, and
// when asked, at most once each interval, a checkpoint in two steps. PASSIVE first, which never
// waits for the store's writes or reads and copies the bulk of the WAL; then RESTART, which holds
// the store's writes (they wait for it: busy_timeout) while it copies what was committed
// meanwhile, so that the next commit writes the WAL from its start again. PASSIVE alone never gets
// there under a steady load (a commit always lands while it copies), and the WAL would only grow.
// Its timer is its own: fake timers in the relay's thread never hold it.
const WORKER_SOURCE = `'use strict'
const { parentPort, workerData } = require('node:worker_threads')
const Database = require(workerData.driverPath)
const db = new Database(workerData.file, { fileMustExist: true })
db.pragma('busy_timeout = ' + workerData.restartWaitMs)
let last = -Infinity
let timer
function checkpoint() {
  timer = undefined
  try {
    db.pragma('wal_checkpoint(PASSIVE)')
    const [row] = db.pragma('wal_checkpoint(RESTART)')
    const { log, checkpointed, busy } = row
    parentPort.postMessage({ log, checkpointed, restarted: busy === 0 })
  } catch (error) {
    parentPort.postMessage({ error: String(error && error.message) })
  }
  last = Date.now()
}
parentPort.on('message', (message) => {
  if (message === 'close') {
    clearTimeout(timer)
    db.close()
    parentPort.close()
    return
  }
  const wait = last + workerData.intervalMs - Date.now()
  if (wait <= 0) checkpoint()
  else timer = setTimeout(checkpoint, wait)
})
`

/** What one checkpoint of the thread did. */
export interface CheckpointResult {
  /** The WAL's frames. */
  log: number
  /** How many of them are in the database file now. */
  checkpointed: number
  /** Whether the next commit writes the WAL from its start (false: a write held it too long). */
  restarted: boolean
}

// The CommonJS build has __filename; the ES module build (and the sources) have import.meta.url.
const require = createRequire(typeof __filename === 'string' ? __filename : import.meta.url)

/**
 * Checkpoints the store's WAL (copies its committed pages into the database file) on a thread of
 * its own. SQLite checkpoints on the connection that commits, in the commit: on the relay's one
 * thread, where it copied each commit's pages and waited for two flushes of the disk while no
 * request was read (with random message ids, each commit dirties pages all over the indexes, so a
 * checkpoint came every commit or two under load). The thread's connection does it meanwhile;
 * the store's own checkpoints only come back past {@link OWN_CHECKPOINT_PAGES}.
 *
 * A checkpoint changes nothing a reader sees and loses nothing if the process dies in it (SQLite
 * replays the WAL at the next open), so the relay never waits for one: acknowledged messages were
 * durable in the WAL already (`wal-sync.ts`).
 */
export class WalCheckpointer {
  readonly #db: SqliteDatabase
  readonly #file: string
  readonly #startAfter: number
  /** Deliveries enqueued while no thread runs yet. */
  #enqueued = 0
  #worker: Worker | undefined
  /** Resolves when the thread has exited. */
  #exited: Promise<void> | undefined
  /** A checkpoint asked for and not answered yet. */
  #asked = false
  /** Commits made while a checkpoint ran: one more follows it. */
  #again = false
  /** Whether the last checkpoint failed (a failure is logged once, until one succeeds again). */
  #failing = false
  #last: CheckpointResult | undefined
  #idle: (() => void)[] = []
  #closed = false

  /** For `db`'s file in WAL mode; `undefined` for a database without a WAL file (in memory). */
  static for(db: SqliteDatabase): WalCheckpointer | undefined {
    const file = db.memory ? undefined : databaseFile(db)
    const wal = db.pragma('journal_mode', { simple: true }) === 'wal'
    if (file === undefined || !wal) return undefined
    return new WalCheckpointer(db, file)
  }

  /**
   * For `db`, whose file is `file` (a file in WAL mode: an in-memory database has no WAL).
   * `startAfter`: deliveries enqueued before the thread starts (tests start it at once).
   */
  constructor(db: SqliteDatabase, file: string, { startAfter = CHECKPOINT_THREAD_AFTER } = {}) {
    this.#db = db
    this.#file = file
    this.#startAfter = startAfter
  }

  /** What the last checkpoint did, once the thread answered one. */
  get last(): CheckpointResult | undefined {
    return this.#last
  }

  /** Told after each commit of `count` deliveries: asks the thread for a checkpoint. */
  committed(count: number): void {
    if (this.#closed) return
    if (this.#worker === undefined) {
      if (this.#exited !== undefined) return // the thread failed: SQLite checkpoints as before
      this.#enqueued += count
      if (this.#enqueued < this.#startAfter) return
      this.#start()
    }
    if (this.#asked) this.#again = true
    else this.#ask()
  }

  /** Resolves once no checkpoint is asked for or running (tests). */
  idle(): Promise<void> {
    return this.#asked ? new Promise((resolve) => this.#idle.push(resolve)) : Promise.resolve()
  }

  /** Ends the thread (after its running checkpoint), before the store's connection closes. */
  async close(): Promise<void> {
    this.#closed = true
    this.#worker?.postMessage('close')
    await this.#exited
    for (const resolve of this.#idle.splice(0)) resolve()
  }

  #start(): void {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        driverPath: require.resolve('better-sqlite3'),
        file: this.#file,
        intervalMs: CHECKPOINT_INTERVAL_MS,
        restartWaitMs: RESTART_WAIT_MS,
      },
    })
    // The process may end without closing the store (a test, a crash): never kept alive by it.
    worker.unref()
    this.#worker = worker
    this.#exited = new Promise((resolve) => worker.once('exit', () => resolve()))
    worker.on('message', (answer: CheckpointResult | { error: string }) => this.#answered(answer))
    worker.once('error', (error) => this.#failed(error))
    this.#db.pragma(`wal_autocheckpoint = ${OWN_CHECKPOINT_PAGES}`)
  }

  #ask(): void {
    this.#asked = true
    this.#worker?.postMessage('checkpoint')
  }

  #answered(answer: CheckpointResult | { error: string }): void {
    this.#asked = false
    if ('error' in answer) {
      // Nothing is lost (the pages stay in the WAL); the next commit asks again.
      const event = 'checkpoint-failed'
      if (!this.#failing) log.warn(`the SQLite checkpoint failed: ${answer.error}`, { event })
      this.#failing = true
    } else {
      this.#failing = false
      this.#last = answer
    }
    if (this.#again && !this.#closed) {
      this.#again = false
      this.#ask()
      return
    }
    for (const resolve of this.#idle.splice(0)) resolve()
  }

  // The thread could not start or died: the store's own connection checkpoints again, as before.
  #failed(error: Error): void {
    log.warn(`the SQLite checkpoint thread stopped: ${error.message}`, {
      event: 'checkpoint-failed',
    })
    this.#worker = undefined
    this.#asked = false
    if (this.#db.open) this.#db.pragma('wal_autocheckpoint = 1000')
    for (const resolve of this.#idle.splice(0)) resolve()
  }
}
