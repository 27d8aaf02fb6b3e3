import { Worker } from 'node:worker_threads'
import { RelayError } from '../../errors'
import {
  DEFAULT_FUNCTION_MEMORY_MB,
  DEFAULT_FUNCTION_TIMEOUT_MS,
  ERR_FUNCTION_COMPILE,
  ERR_FUNCTION_MEMORY,
  ERR_FUNCTION_TIMEOUT,
  FUNCTION_REPLY_CHARS,
  FUNCTION_STACK_BYTES,
  FUNCTION_WATCHDOG_GRACE_MS,
} from '../../config/function-limits'
import { PRELUDE } from './prelude'
import { loadQuickJs } from './quickjs'
import { resultOf, timeoutMessage } from './replies'
import type { FunctionResult } from './result'
import { WORKER_SOURCE } from './worker-source'

/** A function's code and the limits it runs under. */
export interface FunctionSpec {
  /** The function's source: a script defining `onTrack` … `onDelete` and/or `transformEvent`. */
  code: string
  /** Where the code came from, for errors and stack traces: its file, or a config path. */
  filename: string
  /** Passed to every call as its second argument (`functionSettings`). */
  settings?: Record<string, unknown>
  /** ms per call. @default 1000 */
  timeoutMs?: number
  /** MB of heap. @default 64 */
  memoryMb?: number
}

/** The code of a function does not compile (or throws while loading). `code` `ERR_FUNCTION_COMPILE`. */
export class FunctionCompileError extends RelayError {
  /** What the compiler said, without the filename (`SyntaxError: …`). */
  readonly reason: string

  constructor(filename: string, message: string) {
    super(ERR_FUNCTION_COMPILE, `${filename}: the function does not compile: ${message}`)
    this.name = 'FunctionCompileError'
    this.reason = message
  }
}

// What the worker answers a batch: each call's reply, in order, from the first (the sandbox's JSON,
// then for an event sent on a newline and the event's JSON), how long each ran, and whether the
// worker is ending (the last call left its interpreter unsafe; the calls not answered never ran).
interface Replies {
  texts: string[]
  ms: number[]
  fatal: boolean
}

interface PendingCall {
  event: string
  resolve: (result: FunctionResult) => void
}

// Calls waiting when the worker is free go to it together, in one message each way: a round trip
// between threads costs far more of the relay's CPU than a trivial call does in the sandbox.
const CALLS_PER_BATCH = 64

/**
 * One function in its sandbox: QuickJS (WebAssembly) in a worker thread of its own, so an endless
 * loop or a memory blow-up stalls that function's calls only, never the relay's event loop nor
 * another destination's function. Calls run one at a time, in order (those waiting are sent to
 * the worker in batches). A call that times out or exhausts its memory ends its worker; the calls
 * after it go to a fresh one.
 */
export class FunctionSandbox {
  readonly #spec: Required<FunctionSpec>
  // The settings as JSON, made once and handed to each worker it starts: each call parses a fresh copy in the sandbox.
  readonly #settingsJson: string
  #worker: Promise<Worker> | undefined
  readonly #queue: PendingCall[] = []
  // The batch the worker is running, in order; empty while it is free.
  #running: PendingCall[] = []
  // The worker the running batch was posted to: its death settles that batch, no other.
  #runningOn: Worker | undefined
  #watchdog: NodeJS.Timeout | undefined
  #closed = false

  private constructor(spec: FunctionSpec) {
    this.#spec = {
      settings: {},
      timeoutMs: DEFAULT_FUNCTION_TIMEOUT_MS,
      memoryMb: DEFAULT_FUNCTION_MEMORY_MB,
      ...spec,
    }
    this.#settingsJson = JSON.stringify(this.#spec.settings)
  }

  /**
   * Compiles `spec.code` in a new sandbox.
   *
   * @throws {FunctionCompileError} when the code does not compile or throws while loading.
   */
  static async start(spec: FunctionSpec): Promise<FunctionSandbox> {
    const sandbox = new FunctionSandbox(spec)
    sandbox.#worker = sandbox.#spawn()
    await sandbox.#worker
    return sandbox
  }

  /** Runs the function on `event` (a message as stored). Never rejects: failures are results. */
  call(event: unknown): Promise<FunctionResult> {
    if (this.#closed) return Promise.resolve(failure('the function was closed (the relay is stopping or reloading)'))
    return new Promise((resolve) => {
      this.#queue.push({ event: JSON.stringify(event), resolve })
      // On the next turn: the calls asked for meanwhile go in the same batch.
      if (this.#running.length === 0 && this.#queue.length === 1) queueMicrotask(() => void this.#next())
    })
  }

  /** Ends the worker; calls still queued resolve as errors. */
  async close(): Promise<void> {
    this.#closed = true
    for (const call of this.#queue.splice(0)) call.resolve(failure('the function was closed before it ran'))
    const worker = this.#worker
    this.#worker = undefined
    if (worker !== undefined) await (await worker.catch(() => undefined))?.terminate()
  }

  async #next(): Promise<void> {
    if (this.#running.length > 0) return
    if (this.#closed) {
      for (const call of this.#queue.splice(0)) call.resolve(failure('the function was closed before it ran'))
      return
    }
    const calls = this.#queue.splice(0, CALLS_PER_BATCH)
    if (calls.length === 0) return
    this.#running = calls
    let worker: Worker
    try {
      this.#worker ??= this.#spawn()
      worker = await this.#worker
    } catch (error) {
      this.#worker = undefined
      for (const call of calls)
        call.resolve(failure(`the function's sandbox did not start: ${(error as Error).message}`))
      this.#endBatch()
      return
    }
    worker.ref()
    // The sandbox's own interrupt stops each call at functionTimeout; this ends a thread it could not stop.
    this.#watchdog = setTimeout(
      () => {
        this.#retire(worker)
        this.#fail(worker, failure(timeoutMessage(this.#spec.timeoutMs), ERR_FUNCTION_TIMEOUT))
      },
      this.#spec.timeoutMs * calls.length + FUNCTION_WATCHDOG_GRACE_MS,
    )
    this.#runningOn = worker
    const events = `[${calls.map((call) => call.event).join(',')}]`
    worker.postMessage({ events, count: calls.length })
  }

  // The worker ended or failed mid-batch: the call it was running gets `result`; the calls after it
  // never ran and go to a fresh worker.
  #fail(worker: Worker, result: FunctionResult): void {
    if (this.#runningOn !== worker) return
    this.#running.shift()?.resolve(result)
    this.#endBatch()
  }

  // The batch is over: calls it did not answer go first in the queue, and the next batch starts.
  #endBatch(): void {
    clearTimeout(this.#watchdog)
    this.#queue.unshift(...this.#running)
    this.#running = []
    this.#runningOn = undefined
    if (this.#queue.length > 0) void this.#next()
  }

  #retire(worker: Worker): void {
    if (this.#worker !== undefined) this.#worker = undefined
    void worker.terminate()
  }

  async #spawn(): Promise<Worker> {
    const { code, filename, timeoutMs, memoryMb } = this.#spec
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        ...(await loadQuickJs()),
        code,
        filename,
        prelude: PRELUDE,
        settings: this.#settingsJson,
        timeoutMs,
        memoryBytes: memoryMb * 1024 * 1024,
        stackBytes: FUNCTION_STACK_BYTES,
        replyChars: FUNCTION_REPLY_CHARS,
      },
      // Nothing of the relay's environment reaches the thread (the sandbox inside has none either).
      env: {},
      stdout: true,
      stderr: true,
    })
    worker.unref()
    return new Promise<Worker>((resolve, reject) => {
      const onStart = (message: { type: string; message?: string }) => {
        if (message.type === 'ready') {
          worker.off('message', onStart)
          worker.on('message', (replies: Replies) => this.#onReplies(worker, replies))
          resolve(worker)
        } else {
          void worker.terminate()
          reject(
            message.type === 'compile-error'
              ? new FunctionCompileError(filename, message.message ?? 'unknown error')
              : new RelayError('ERR_FUNCTION_SANDBOX', `the function's sandbox failed: ${message.message}`),
          )
        }
      }
      worker.on('message', onStart)
      worker.once('error', (error) => {
        reject(error)
        // WebAssembly memory that cannot grow further ends the thread itself.
        const code = /memory|allocation/i.test(error.message) ? ERR_FUNCTION_MEMORY : undefined
        this.#fail(worker, failure(`the function's sandbox failed: ${error.message}`, code))
      })
      worker.once('exit', (exitCode) => {
        this.#fail(worker, failure(`the function's sandbox ended during the call (exit code ${exitCode})`))
        if (this.#worker !== undefined) {
          // A worker that exits (after a timeout or the memory limit) is replaced at the next call.
          void this.#worker.then(
            (current) => {
              if (current === worker) this.#worker = undefined
            },
            () => undefined,
          )
        }
      })
    })
  }

  #onReplies(worker: Worker, { texts, ms, fatal }: Replies): void {
    if (this.#runningOn !== worker) return
    const { timeoutMs, memoryMb } = this.#spec
    const answered = this.#running.splice(0, texts.length)
    for (let i = 0; i < answered.length; i++) {
      answered[i]!.resolve(resultOf(texts[i]!, ms[i] ?? 0, timeoutMs, memoryMb))
    }
    if (fatal) this.#retire(worker)
    else worker.unref()
    this.#endBatch()
  }
}

function failure(message: string, code?: string): FunctionResult {
  return { kind: 'error', message, ...(code === undefined ? {} : { code }), logs: [], logsTruncated: false, ms: 0 }
}
