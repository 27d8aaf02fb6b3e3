// The Node build's platform: every use of a Node module by the SDK is here or behind this file.
// The builds for Bun, Deno, Workers and Edge replace this module with `runtime.web.ts` (see
// tsup.config.ts), which exports the same names with what those runtimes have.
import { randomUUID } from 'node:crypto'
import { EventEmitter } from 'node:events'
import type { Dispatcher } from 'undici'
import type { Transport, TransportOptions } from '../transport/transport'
import { UndiciTransport } from '../transport/undici'

export { unwatchBeforeExit, watchBeforeExit } from '../before-exit'
export { BodyWriter } from './body-writer'
export { diagnostics } from './diagnostics'
/** The client's base class: Node's `EventEmitter`. */
export { EventEmitter as Emitter }

/** The runtime, as the `User-Agent` names it. */
export const RUNTIME = `node ${process.version}`

/** Whether the `dispatcher` option means anything here (an undici `Dispatcher`): on Node only. */
export const TAKES_DISPATCHER = true

/** Whether `gzip: true` can be honoured: node:zlib always can. */
export const CAN_GZIP = true

/** A new `messageId`: a random UUID. */
export const newMessageId: () => string = randomUUID

/** Runs `task` once the current operation has finished, before any I/O. */
export function nextTick(task: () => void): void {
  process.nextTick(task)
}

/** The transport batches are sent with: undici, through `dispatcher` when one was given. */
export function createTransport(options: TransportOptions, dispatcher: unknown): Transport {
  return new UndiciTransport({ ...options, dispatcher: dispatcher as Dispatcher | undefined })
}
