import type { AlertsOptions } from './alerts-option'
import type { WebhookEntry, WebhookSettings } from '../../webhooks/index'
import type { LogLevel } from '../log'
import type { DestinationFunction } from './function-settings'
import type { DestinationConsent } from './consent-setting'
import type { TrackingPlan, UnplannedAction, ViolationAction } from './plan'

/** The destinations a source sends to, by name. Keys are case sensitive. */
export interface SourceDestinations {
  /** The Webhooks destination's settings (see `tracklet/webhooks`); absent means the source does not use it. */
  Webhooks?: RelayWebhookSettings & DestinationFunction & DestinationConsent
  /** Any other destination's settings, as its module checks them (`src/relay/destinations/`). */
  [destination: string]: object | undefined
}

/**
 * The Webhooks settings as the relay takes them: each webhook may carry its limits, held across
 * every relay on the store (docs/delivery-controls.md).
 */
export interface RelayWebhookSettings extends Omit<WebhookSettings, 'webhooks'> {
  webhooks: readonly (WebhookEntry & {
    /** Requests per second at most to this URL, > 0. */
    ratePerSecond?: number
    /** Requests in flight at once at most to this URL, an integer ≥ 1. */
    maxInFlight?: number
  })[]
  /**
   * Each user's (`userId`, else `anonymousId`) deliveries to this destination one at a time, in
   * the order received; a retried one holds the user's later ones (docs/delivery-controls.md,
   * "Ordering").
   * @default false
   */
  ordered?: boolean
}

/** One source: an application that sends with its own write key. */
export interface RelaySource {
  /** A unique name, shown in the delivery log and used by the admin API (`source`). */
  name: string
  /** The key the SDK sends as the Basic auth user. Unique across sources; never logged. */
  writeKey: string
  /** The destinations this source's messages go to. */
  destinations?: SourceDestinations
  /** Rules on what this source's messages may be (docs/ingest.md, "Blocking track events"). */
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
  /**
   * The source's tracking plan: a JSON Schema (draft-07) for each planned track event's
   * `properties`, and optionally for `identify`'s and `group`'s `traits` (docs/plans.md).
   * Checked at ingest; every violation is recorded (`GET /v1/violations`).
   */
  plan?: TrackingPlan
  /**
   * What becomes of a track event the plan does not list (always recorded as an `unplanned`
   * violation): `allow` lets it through, `block` drops it. Only with a `plan`. @default 'allow'
   */
  unplanned?: UnplannedAction
  /**
   * What becomes of a message that breaks its schema: `allow` lets it through as sent, `omit`
   * removes the offending properties or traits, `block` drops it. Only with a `plan`. @default 'allow'
   */
  violations?: ViolationAction
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
   * A second Bearer token that reads (every `GET` of the admin API, the live stream, `/metrics`)
   * and changes nothing: a write with it is answered 403 `ERR_READ_ONLY`. Never logged.
   */
  readToken?: string | undefined
  /**
   * The key that encrypts (AES-256-GCM) the secrets of sources written through the admin API:
   * shared secrets and static webhook header values. 32 bytes in base64; several separated by
   * commas while rotating it (the first encrypts). When not given, the `TRACKLET_SECRETS_KEY`
   * environment variable. Without one, an API write carrying such a secret is refused. Never logged.
   */
  secretsKey?: string | undefined
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
  /**
   * The sources of the file (provisioned: read-only through the admin API). May be empty when every
   * source is created through the admin API (docs/relay.md, "Two kinds of source").
   */
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
  /**
   * How much of a failed webhook request's answer (any status but 2xx) the delivery log keeps with
   * the attempt, in bytes, 0 to 65536: what tells a receiver's team what broke. 0 keeps none.
   * @default 4096
   */
  responseBodyLimit?: number
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
   * The longest one call to the database may take, in milliseconds (waiting for a connection
   * included). While the database is frozen, out of reach or locked, ingest answers 503 and
   * `/healthz` turns 503 within this time instead of holding requests; both recover by themselves
   * once it answers again. On SQLite, how long a write waits for a lock held by another process.
   * @default 5000
   */
  storeTimeout?: number
  /**
   * The least severe level the log writes: `error`, `warn`, `info` or `debug` (one line per
   * delivered message). When not given, the `LOG_LEVEL` environment variable, then `info`.
   * @default 'info'
   */
  logLevel?: LogLevel
  /**
   * Relay processes on one port and one database, for `tracklet relay` (the command forks them:
   * each is a relay of its own, sharing leases as separate relays on one database do). A relay
   * started in code is one process: {@link createRelay} refuses a value above 1. @default 1
   */
  workers?: number
  /**
   * Readers of the live stream (`GET /v1/stream`, `tracklet tail`, the operator page's live view)
   * at once on this relay; the next is answered 503. Each holds at most 1 MiB it could not send
   * yet (past it, events are skipped for that reader). @default 10
   */
  streamReaders?: number
  /** Where the relay POSTs its alerts (a circuit opened or closed, dead letters); none by default. */
  alerts?: AlertsOptions | undefined
  /** How long one call of a destination's function may run, in milliseconds (docs/functions.md). @default 1000 */
  functionTimeout?: number
  /** The memory each destination's function may use, in megabytes (docs/functions.md). @default 64 */
  functionMemory?: number
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
  readToken: string | undefined
  secretsKey: string | undefined
  allowPrivateNetworks: boolean
  trustProxy: boolean
  sources: readonly RelaySource[]
  concurrency: number
  leaseTimeout: number
  retention: number
  webhookTimeout: number
  responseBodyLimit: number
  headersTimeout: number
  requestTimeout: number
  maxHeaderSize: number
  breaker: Required<BreakerOptions>
  maxInFlightPerUrl: number
  storeTimeout: number
  logLevel: LogLevel
  workers: number
  streamReaders: number
  alerts: AlertsOptions | undefined
  functionTimeout: number
  functionMemory: number
}
