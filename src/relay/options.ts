import { describe, isNonEmptyString, isPlainObject } from '../shared/validate'
import type { WebhookSettings } from '../webhooks/index'
import { RelayConfigError } from './errors'
import { LOG_LEVELS, type LogLevel, logLevelFrom } from './log'
import { DESTINATION_NAMES } from './sources'

/** The destinations a source sends to, by name. Keys are case sensitive. */
export interface SourceDestinations {
  /** The Webhooks destination's settings (see `tracklet/webhooks`); absent means the source does not use it. */
  Webhooks?: WebhookSettings
}

/** One source: an application that sends with its own write key. */
export interface RelaySource {
  /** A unique name, shown in the delivery log and used by the admin API (`source`). */
  name: string
  /** The key the SDK sends as the Basic auth user. Unique across sources; never logged. */
  writeKey: string
  /** The destinations this source's messages go to. */
  destinations?: SourceDestinations
  /** Rules on what this source's messages may be (DESIGN.md §3 "Source schema"). */
  schema?: SourceSchema
}

/** A source's schema: rules applied to its messages at ingest. */
export interface SourceSchema {
  /**
   * Track event names (exact and case sensitive, as in `event`) that are dropped: such a message
   * is authenticated, validated and acknowledged like any other, and counts as accepted, but no
   * delivery is written for it. Other call types are never blocked by this list. @default []
   */
  blockedEvents?: readonly string[]
}

/** Options of {@link createRelay}; also the shape of the CLI's JSON config file. */
export interface RelayOptions {
  /** The TCP port to listen on; `0` picks a free one. @default 8787 */
  port?: number
  /** The address to listen on. @default '127.0.0.1' */
  host?: string
  /**
   * Where the outbox lives. A SQLite file path (created when missing) or `':memory:'`: one relay,
   * nothing to run. A `postgres://user:password@host:5432/db` URL: PostgreSQL, shared by any number
   * of relays. @default 'tracklet.db'
   */
  database?: string
  /** The Bearer token of the admin API. Without it the admin API answers 401 to everyone. */
  adminToken?: string | undefined
  /**
   * A Bearer token that reads `GET /metrics` and nothing else, for a Prometheus server that should
   * not hold the admin token. The admin token reads `/metrics` too. Never logged.
   */
  metricsToken?: string | undefined
  /** Let webhooks reach loopback, private, link-local and other non-public addresses. @default false */
  allowPrivateNetworks?: boolean
  /**
   * The relay is behind a proxy: limit failed authentications by the client address the proxy
   * gives (the last address of `X-Forwarded-For`) instead of the connection's. @default false
   */
  trustProxy?: boolean
  /** The sources whose write keys are accepted. At least one. */
  sources: readonly RelaySource[]
  /** Deliveries in flight at once, per source (so one slow receiver holds up only its own). @default 32 */
  concurrency?: number
  /**
   * How long a relay's claim on a delivery holds before another relay may take the work, in
   * milliseconds. Leases of attempts still in flight are renewed, so any value from 1000 works; a
   * relay that dies holds its work this long. @default 30000
   */
  leaseTimeout?: number
  /**
   * How long delivered deliveries (and their attempts) are kept in the delivery log, in
   * milliseconds; dead-lettered ones are kept until retried. @default 604800000 (7 days)
   */
  retention?: number
  /** One webhook request's time limit, in milliseconds. @default 5000 */
  webhookTimeout?: number
  /** Time allowed to receive a request's headers, in milliseconds (slow clients are cut off). @default 10000 */
  headersTimeout?: number
  /** Time allowed to receive a whole request, in milliseconds. @default 30000 */
  requestTimeout?: number
  /** The largest request head, in bytes; larger gets 431. @default 16384 */
  maxHeaderSize?: number
  /** The circuit breaker of each webhook URL (see docs/breaker.md). */
  breaker?: BreakerOptions
  /**
   * Requests in flight at once to one webhook URL from this relay, every source together, so a
   * receiver that answers slowly is not flooded; deliveries to other URLs keep flowing. @default 32
   */
  maxInFlightPerUrl?: number
  /**
   * The least severe level the log writes: `error`, `warn`, `info` or `debug` (one line per
   * delivered message). When not given, the `LOG_LEVEL` environment variable, then `info`.
   * @default 'info'
   */
  logLevel?: LogLevel
}

/**
 * When a webhook URL counts as down and how it is probed. While a URL's circuit is open, nothing
 * is sent there but one probe at a time (across every relay on the database); the first answer
 * closes it and every delivery waiting for it is due at once.
 */
export interface BreakerOptions {
  /** Failed requests in a row (timeouts, network errors, 429, 5xx) that open a URL's circuit. @default 5 */
  failureThreshold?: number
  /** The wait before the first probe of an open circuit, in milliseconds; it doubles after each failed probe. @default 1000 */
  probeInterval?: number
  /**
   * The longest wait between two probes, in milliseconds: also the longest a receiver that came
   * back waits before its backlog is sent. @default 5000
   */
  maxProbeInterval?: number
}

/** {@link RelayOptions} with every default applied, validated and copied (never the caller's objects). */
export interface ResolvedRelayOptions {
  port: number
  host: string
  database: string
  adminToken: string | undefined
  metricsToken: string | undefined
  allowPrivateNetworks: boolean
  trustProxy: boolean
  sources: readonly RelaySource[]
  concurrency: number
  leaseTimeout: number
  retention: number
  webhookTimeout: number
  headersTimeout: number
  requestTimeout: number
  maxHeaderSize: number
  breaker: Required<BreakerOptions>
  maxInFlightPerUrl: number
  logLevel: LogLevel
}

const DEFAULTS = Object.freeze({
  port: 8787,
  host: '127.0.0.1',
  database: 'tracklet.db',
  allowPrivateNetworks: false,
  trustProxy: false,
  concurrency: 32,
  leaseTimeout: 30_000,
  retention: 7 * 24 * 60 * 60 * 1000,
  webhookTimeout: 5000,
  headersTimeout: 10_000,
  requestTimeout: 30_000,
  maxHeaderSize: 16_384,
  maxInFlightPerUrl: 32,
})

const BREAKER_DEFAULTS: Readonly<Required<BreakerOptions>> = Object.freeze({
  failureThreshold: 5,
  probeInterval: 1000,
  maxProbeInterval: 5000,
})

const KNOWN_OPTIONS = new Set([
  ...Object.keys(DEFAULTS),
  'adminToken',
  'metricsToken',
  'sources',
  'breaker',
  'logLevel',
])

/**
 * Validates relay options (from code or a parsed config file) and applies the defaults.
 * Throws a {@link RelayConfigError} naming the first invalid field, such as `sources[0].writeKey`.
 * Destination settings are checked here for shape only; the destination itself checks them in
 * full when the relay builds it.
 */
export function resolveRelayOptions(input: unknown): ResolvedRelayOptions {
  if (!isPlainObject(input)) throw new RelayConfigError('options', `must be an object, got ${describe(input)}`)
  for (const key of Object.keys(input)) {
    if (!KNOWN_OPTIONS.has(key))
      throw new RelayConfigError(key, `is not a relay option (known: ${[...KNOWN_OPTIONS].join(', ')})`)
  }
  const adminToken = token(input, 'adminToken')
  const metricsToken = token(input, 'metricsToken')
  return {
    port: integer(input, 'port', DEFAULTS.port, 0, 65_535),
    host: string(input, 'host', DEFAULTS.host),
    database: string(input, 'database', DEFAULTS.database),
    adminToken,
    metricsToken,
    allowPrivateNetworks: boolean(input, 'allowPrivateNetworks', DEFAULTS.allowPrivateNetworks),
    trustProxy: boolean(input, 'trustProxy', DEFAULTS.trustProxy),
    sources: resolveSources(input['sources']),
    concurrency: integer(input, 'concurrency', DEFAULTS.concurrency, 1, 10_000),
    leaseTimeout: integer(input, 'leaseTimeout', DEFAULTS.leaseTimeout, 1000, 3_600_000),
    // Up to ten years: past that a delivered row is as good as kept forever.
    retention: integer(input, 'retention', DEFAULTS.retention, 1000, 10 * 365 * 24 * 60 * 60 * 1000),
    webhookTimeout: integer(input, 'webhookTimeout', DEFAULTS.webhookTimeout, 1, 600_000),
    headersTimeout: integer(input, 'headersTimeout', DEFAULTS.headersTimeout, 1, 600_000),
    requestTimeout: integer(input, 'requestTimeout', DEFAULTS.requestTimeout, 1, 3_600_000),
    maxHeaderSize: integer(input, 'maxHeaderSize', DEFAULTS.maxHeaderSize, 1024, 1_048_576),
    breaker: resolveBreaker(input['breaker']),
    maxInFlightPerUrl: integer(input, 'maxInFlightPerUrl', DEFAULTS.maxInFlightPerUrl, 1, 10_000),
    logLevel: resolveLogLevel(input['logLevel']),
  }
}

function resolveBreaker(value: unknown): Required<BreakerOptions> {
  if (value === undefined) return { ...BREAKER_DEFAULTS }
  if (!isPlainObject(value)) throw new RelayConfigError('breaker', `must be an object, got ${describe(value)}`)
  for (const key of Object.keys(value)) {
    if (!(key in BREAKER_DEFAULTS)) {
      throw new RelayConfigError(
        `breaker.${key}`,
        `is not a breaker option (known: ${Object.keys(BREAKER_DEFAULTS).join(', ')})`,
      )
    }
  }
  const field = (key: keyof BreakerOptions, min: number, max: number) =>
    integer(value, key, BREAKER_DEFAULTS[key], min, max, `breaker.${key}`)
  // Probes at least every hour: past that, a receiver back for long would still wait, unseen.
  const probeInterval = field('probeInterval', 100, 3_600_000)
  const maxProbeInterval = field('maxProbeInterval', 100, 3_600_000)
  if (maxProbeInterval < probeInterval) {
    throw new RelayConfigError(
      'breaker.maxProbeInterval',
      `must be at least breaker.probeInterval (${probeInterval}), got ${maxProbeInterval}`,
    )
  }
  return { failureThreshold: field('failureThreshold', 1, 10_000), probeInterval, maxProbeInterval }
}

function resolveSources(value: unknown): RelaySource[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw new RelayConfigError('sources', `must be a non-empty array of sources, got ${describe(value)}`)
  }
  const names = new Set<string>()
  const writeKeys = new Set<string>()
  return value.map((source: unknown, index) => {
    const field = `sources[${index}]`
    if (!isPlainObject(source)) throw new RelayConfigError(field, `must be an object, got ${describe(source)}`)
    const { name, writeKey, destinations, schema } = source
    if (!isNonEmptyString(name))
      throw new RelayConfigError(`${field}.name`, `must be a non-empty string, got ${describe(name)}`)
    if (names.has(name))
      throw new RelayConfigError(`${field}.name`, `${JSON.stringify(name)} is used by another source`)
    // The write key's value is a secret: describe its type, never the value itself.
    if (!isNonEmptyString(writeKey))
      throw new RelayConfigError(`${field}.writeKey`, `must be a non-empty string, got ${typeof writeKey}`)
    if (writeKeys.has(writeKey)) throw new RelayConfigError(`${field}.writeKey`, 'is the write key of another source')
    names.add(name)
    writeKeys.add(writeKey)
    return {
      name,
      writeKey,
      destinations: resolveDestinations(destinations, `${field}.destinations`),
      schema: resolveSchema(schema, `${field}.schema`),
    }
  })
}

function resolveDestinations(value: unknown, field: string): SourceDestinations {
  if (value === undefined) return {}
  if (!isPlainObject(value)) throw new RelayConfigError(field, `must be an object, got ${describe(value)}`)
  const destinations: SourceDestinations = {}
  for (const [name, settings] of Object.entries(value)) {
    if (!(DESTINATION_NAMES as readonly string[]).includes(name)) {
      throw new RelayConfigError(
        `${field}.${name}`,
        `is not a known destination (known: ${DESTINATION_NAMES.join(', ')}; names are case sensitive)`,
      )
    }
    if (!isPlainObject(settings))
      throw new RelayConfigError(`${field}.${name}`, `must be an object of settings, got ${describe(settings)}`)
    // A deep copy, so later changes to the caller's objects never reach the running relay.
    destinations.Webhooks = structuredClone(settings) as unknown as WebhookSettings
  }
  return destinations
}

const SCHEMA_KEYS = ['blockedEvents']

function resolveSchema(value: unknown, field: string): SourceSchema {
  if (value === undefined) return { blockedEvents: [] }
  if (!isPlainObject(value)) throw new RelayConfigError(field, `must be an object, got ${describe(value)}`)
  for (const key of Object.keys(value)) {
    // A misspelt rule would otherwise block nothing, silently.
    if (!SCHEMA_KEYS.includes(key))
      throw new RelayConfigError(`${field}.${key}`, `is not a schema rule (known: ${SCHEMA_KEYS.join(', ')})`)
  }
  const blocked = value['blockedEvents']
  if (blocked === undefined) return { blockedEvents: [] }
  if (!Array.isArray(blocked))
    throw new RelayConfigError(`${field}.blockedEvents`, `must be an array of event names, got ${describe(blocked)}`)
  blocked.forEach((event: unknown, index) => {
    if (!isNonEmptyString(event))
      throw new RelayConfigError(
        `${field}.blockedEvents[${index}]`,
        `must be a non-empty string, got ${describe(event)}`,
      )
  })
  return { blockedEvents: [...(blocked as string[])] }
}

// A secret: its type is described in an error, never its value.
function token(input: Record<string, unknown>, key: string): string | undefined {
  const value = input[key]
  if (value !== undefined && !isNonEmptyString(value)) {
    throw new RelayConfigError(key, `must be a non-empty string, got ${typeof value}`)
  }
  return value
}

function integer(
  input: Record<string, unknown>,
  key: string,
  fallback: number,
  min: number,
  max: number,
  field = key,
): number {
  const value = input[key]
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new RelayConfigError(field, `must be an integer from ${min} to ${max}, got ${describe(value)}`)
  }
  return value
}

function string(input: Record<string, unknown>, key: string, fallback: string): string {
  const value = input[key]
  if (value === undefined) return fallback
  if (!isNonEmptyString(value)) throw new RelayConfigError(key, `must be a non-empty string, got ${describe(value)}`)
  return value
}

function boolean(input: Record<string, unknown>, key: string, fallback: boolean): boolean {
  const value = input[key]
  if (value === undefined) return fallback
  if (typeof value !== 'boolean') throw new RelayConfigError(key, `must be true or false, got ${describe(value)}`)
  return value
}

// The option, else LOG_LEVEL (so an operator can turn on debug without editing the file), else info.
function resolveLogLevel(given: unknown): LogLevel {
  if (given !== undefined) {
    try {
      return logLevelFrom(given, 'logLevel')
    } catch (error) {
      throw new RelayConfigError('logLevel', `must be one of ${LOG_LEVELS.join(', ')}, got ${describe(given)}`, {
        cause: error,
      })
    }
  }
  return logLevelFrom(process.env['LOG_LEVEL'])
}
