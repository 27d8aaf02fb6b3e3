import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'
import { log } from '../../log'
import { WRITER_SOURCE } from './writer-source'

/** The code of the error a write gets when the thread stopped before answering it. */
export const WRITER_STOPPED = 'ERR_SQLITE_WRITER_STOPPED'

/** Whether a write was refused because the thread stopped (the write may be made again elsewhere). */
export function isWriterStopped(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === WRITER_STOPPED
}

/** What the writer thread is started with (the statement texts and their shape). */
export interface SqliteWriterOptions {
  /** The database file (never `':memory:'`: another connection could not see it). */
  file: string
  /** How long its connection waits for another's write lock, ms. */
  busyTimeout: number
  /** The enqueue statement of `rows` rows, and of one. */
  manySql: string
  oneSql: string
  rows: number
  /** Values per row. */
  rowParams: number
}

interface Pending {
  resolve(inserted: number): void
  reject(error: Error): void
}

type Answer =
  | { id: number; inserted: number }
  | { id: number; error: { message: string; code?: string } }
  | { fatal: { message: string; code?: string } }

/**
 * Ingest's writes on a thread of their own (./writer-source.ts): the relay's thread binds each
 * group's values and hands them over; the thread inserts, commits and flushes the WAL, and the
 * group's promise settles once its rows are on disk. Should the thread stop (it cannot open the
 * file, or crashed: an error in a write is that write's answer, never a stop), every write waiting
 * is refused with {@link WRITER_STOPPED} and {@link running} turns false, so the store writes them,
 * and every write after, on the relay's thread.
 */
export class SqliteWriter {
  readonly #worker: Worker
  /** Writes handed over and not yet answered, by id. */
  readonly #pending = new Map<number, Pending>()
  /** The same writes' promises, which close waits for. */
  readonly #writes = new Set<Promise<unknown>>()
  #nextId = 0
  #running = true
  #closed: Promise<void> | undefined

  constructor(options: SqliteWriterOptions) {
    this.#worker = new Worker(WRITER_SOURCE, { eval: true, workerData: { ...options, driverPath: driverPath() } })
    // Held open only while a write waits for its answer: an idle writer never keeps the process alive.
    this.#worker.unref()
    this.#worker.on('message', (answer: Answer) => this.#answer(answer))
    this.#worker.on('error', (error) => this.#stop(error.message))
    this.#worker.on('exit', () => this.#stop('it exited'))
  }

  /** Whether writes can be handed to the thread. */
  get running(): boolean {
    return this.#running && this.#closed === undefined
  }

  /** Writes the rows whose values are `params` (the enqueue statement's, row after row). */
  write(params: unknown[]): Promise<number> {
    const id = this.#nextId++
    const written = new Promise<number>((resolve, reject) => {
      if (this.#pending.size === 0) this.#worker.ref()
      this.#pending.set(id, { resolve, reject })
      this.#worker.postMessage({ id, params })
    })
    const settled = written.then(
      () => {},
      () => {},
    )
    this.#writes.add(settled)
    void settled.then(() => this.#writes.delete(settled))
    return written
  }

  /** Waits for the writes handed over, then ends the thread (its connection closed). Idempotent. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      await Promise.all(this.#writes)
      if (!this.#running) return
      const exited = new Promise<void>((done) => this.#worker.once('exit', () => done()))
      this.#worker.ref()
      this.#worker.postMessage({ close: true })
      await exited
    })()
    return this.#closed
  }

  #answer(answer: Answer): void {
    if ('fatal' in answer) {
      this.#stop(answer.fatal.message)
      return
    }
    const pending = this.#pending.get(answer.id)
    if (pending === undefined) return
    this.#pending.delete(answer.id)
    if (this.#pending.size === 0) this.#worker.unref()
    if ('error' in answer) pending.reject(Object.assign(new Error(answer.error.message), { code: answer.error.code }))
    else pending.resolve(answer.inserted)
  }

  #stop(why: string): void {
    if (!this.#running) return
    this.#running = false
    if (this.#closed === undefined) {
      log.warn(`the SQLite writer thread stopped (${why}): ingest writes on the relay's thread`, {
        event: 'sqlite-writer-stopped',
      })
    }
    const error = Object.assign(new Error(`the SQLite writer thread stopped: ${why}`), { code: WRITER_STOPPED })
    for (const pending of this.#pending.values()) pending.reject(error)
    this.#pending.clear()
  }
}

// Where better-sqlite3 is installed, resolved from this module (the thread's cwd could be anywhere).
function driverPath(): string {
  // The CommonJS build has __filename; the ES module build (and the sources) have import.meta.url.
  const here = typeof __filename === 'string' ? __filename : import.meta.url
  return createRequire(here).resolve('better-sqlite3')
}
