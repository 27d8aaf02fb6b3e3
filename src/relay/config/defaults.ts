import { DEFAULT_RESPONSE_BODY_LIMIT, DEFAULT_TIMEOUT_MS } from '../../webhooks/limits'
import { DEFAULT_FUNCTION_MEMORY_MB, DEFAULT_FUNCTION_TIMEOUT_MS } from './function-limits'
import { DEFAULT_STORE_TIMEOUT_MS } from '../kit/store-timeout'
import type { BreakerOptions } from './options'

/**
 * The relay's defaults: what an option left out means. docs/relay.md's options table is checked
 * against these by a test, so the two cannot drift apart.
 */
export const RELAY_DEFAULTS = Object.freeze({
  port: 8787,
  host: '127.0.0.1',
  database: 'tracklet.db',
  allowPrivateNetworks: false,
  trustProxy: false,
  concurrency: 32,
  leaseTimeout: 30_000,
  retention: 7 * 24 * 60 * 60 * 1000,
  // The Webhooks destination's own default: one request's limit is its fact.
  webhookTimeout: DEFAULT_TIMEOUT_MS,
  responseBodyLimit: DEFAULT_RESPONSE_BODY_LIMIT,
  headersTimeout: 10_000,
  requestTimeout: 30_000,
  maxHeaderSize: 16_384,
  maxInFlightPerUrl: 32,
  storeTimeout: DEFAULT_STORE_TIMEOUT_MS,
  workers: 1,
  streamReaders: 10,
  functionTimeout: DEFAULT_FUNCTION_TIMEOUT_MS,
  functionMemory: DEFAULT_FUNCTION_MEMORY_MB,
})

/** The circuit breaker's defaults (`breaker` option). */
export const BREAKER_DEFAULTS: Readonly<Required<BreakerOptions>> = Object.freeze({
  failureThreshold: 5,
  probeInterval: 1000,
  maxProbeInterval: 5000,
})

/** An admin token shorter than this draws a start-up warning: it can be guessed. */
export const MIN_ADMIN_TOKEN_LENGTH = 16

/** What a source with a tracking plan does when `schema.unplanned` / `schema.violations` are left out. */
export const PLAN_DEFAULTS = Object.freeze({ unplanned: 'allow', violations: 'allow' } as const)
