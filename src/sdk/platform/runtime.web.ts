// The platform of the builds for Bun, Deno, Cloudflare Workers (workerd) and Vercel Edge: the same
// names as `runtime.ts`, with no `node:` import and no undici (a test reads the built file).
import type { Transport, TransportOptions } from '../transport/transport'
import { FetchTransport } from '../transport/fetch'
import type { RequestDiagnostics } from '../diagnostics'

export { unwatchBeforeExit, watchBeforeExit } from '../before-exit'
export { BodyWriter } from './body-writer.web'
export { Emitter } from './emitter'

/** The runtime, as the `User-Agent` names it. */
export const RUNTIME = detectRuntime()

/** The fetch builds have no undici: a `dispatcher` option is refused, never ignored. */
export const TAKES_DISPATCHER = false

/**
 * Whether `gzip: true` can be honoured: with `CompressionStream` (Bun, Deno, Workers); Vercel's
 * edge-runtime lacks it, and there `gzip: true` is refused rather than quietly not compressing.
 */
export const CAN_GZIP = typeof (globalThis as { CompressionStream?: unknown }).CompressionStream === 'function'

/** A new `messageId`: a random UUID from Web Crypto. */
export function newMessageId(): string {
  return crypto.randomUUID()
}

/** Runs `task` once the current operation has finished. */
export function nextTick(task: () => void): void {
  queueMicrotask(task)
}

/** Diagnostics channels are Node's: these builds publish none. */
export const diagnostics: RequestDiagnostics = { active: false, request() {}, response() {} }

export function createTransport(options: TransportOptions, _dispatcher: unknown): Transport {
  return new FetchTransport(options)
}

function detectRuntime(): string {
  const scope = globalThis as { Bun?: { version: string }; Deno?: { version: { deno: string } }; EdgeRuntime?: unknown }
  if (scope.Bun !== undefined) return `bun ${scope.Bun.version}`
  if (scope.Deno !== undefined) return `deno ${scope.Deno.version.deno}`
  if (scope.EdgeRuntime !== undefined) return 'edge-light'
  if ((globalThis as { navigator?: { userAgent?: string } }).navigator?.userAgent === 'Cloudflare-Workers')
    return 'workerd'
  return 'web'
}
