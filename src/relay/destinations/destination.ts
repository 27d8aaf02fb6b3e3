import type { Dispatcher } from 'undici'
import type { DeliverableMessage } from '../../shared/message'
import type { DeliveryAttempt, RetryState } from '../../webhooks/index'

// What every destination is to the relay (docs/architecture.md, "Destinations"): a named module
// whose settings are checked with their paths, and whose live sender takes a batch of messages and
// answers one outcome per message. Delivery, the breaker, replays and the console know a
// destination only through these types; a new destination is one folder and one line in
// `index.ts`.

/** One destination type: its name, its settings and how a batch is sent. */
export interface DestinationModule<Settings = unknown> {
  /** The key in a source's `destinations` and in a message's `integrations`: `Webhooks`. */
  readonly name: string
  /**
   * Checks raw settings (without the relay's `function` and `functionSettings`, which are checked
   * for every destination alike); returns the resolved settings, a copy.
   *
   * @param path where the settings are, for messages: `sources[0].destinations.Webhooks`.
   * @throws {RelayConfigError} listing EVERY problem, each with its path under `path`.
   */
  parseSettings(raw: unknown, path: string): Settings
  /** The secrets in the settings: redacted from logs, never shown by the API or the page. */
  secrets(settings: Settings): string[]
  /** Builds the live sender of one source's destination; sends nothing yet. */
  create(settings: Settings, context: DestinationContext): DestinationSender
  /**
   * The destination's own counters (`tracklet_archive_files_total`), each labelled by source and
   * fed from the `detail` of its delivered outcomes: the relay registers and feeds them, so a new
   * destination's series need no code outside its folder.
   */
  readonly metrics?: readonly DestinationMetric[]
  /**
   * The gauge of how far behind the destination is, seconds since the oldest message still
   * waiting for it was received (`tracklet_archive_lag_seconds`), per source; none when absent.
   */
  readonly lagMetric?: { readonly name: string; readonly help: string }
}

/** A counter a destination declares (see {@link DestinationModule.metrics}). */
export interface DestinationMetric {
  /** The Prometheus name, `tracklet_<destination>_<what>_total`. */
  readonly name: string
  readonly help: string
  /** What one delivered message adds, read from its outcome's `detail` (0: nothing). */
  count(detail: Readonly<Record<string, unknown>>): number
}

/** What the relay gives a destination it creates. */
export interface DestinationContext {
  /** The source whose destination this is. */
  source: string
  /** This relay process's id (unique per process): for names another relay must not take. */
  relayId: string
  /** The SSRF-guarded dispatcher every outbound HTTP request of the relay goes through. */
  agent: Dispatcher
  /** The relay's limits on outbound requests. */
  limits: {
    /** Per request, ms (`webhookTimeout`). */
    timeout: number
    /** How much of a failed answer is kept, bytes (`responseBodyLimit`). */
    responseBodyLimit: number
  }
}

/**
 * How a failed delivery is retried: `schedule` says when the next attempt goes (`undefined` once
 * the window is spent), and `window` is that window's length from the first attempt, ms — the
 * breaker dead-letters a delivery whose targets stay open past it. One value, so the two never part.
 */
export interface RetryPolicy {
  schedule: (state: RetryState) => number | undefined
  /** ms from the first attempt. */
  window: number
}

/** The live sender of one source's destination. */
export interface DestinationSender {
  /**
   * What the breaker keeps a circuit (and the endpoints view a row) for: webhook URLs,
   * `file:///var/archive`, `s3://bucket/prefix` — never a password or other secret. Empty: no
   * circuit, no limit on requests in flight.
   */
  readonly targets: readonly string[]
  /**
   * Limits per target (docs/delivery-controls.md): its rate and requests in flight, held across
   * every relay on the store. A target without an entry is limited only by the relay's options.
   */
  readonly limits?: ReadonlyMap<string, TargetLimits>
  /**
   * How many due deliveries the lane gathers, and how long it waits for more, before one
   * {@link sendBatch} (Webhooks: 1 and 0). Deliveries gathered stay leased (their leases renewed)
   * until settled.
   */
  readonly batching: Batching
  /** The retry rule; the platform's 4-hour one unless the destination has its own. */
  readonly retries: RetryPolicy
  /**
   * Sends a batch; resolves to one outcome per message, in order. Never rejects: a target that is
   * down is a retryable failure of each message, a message it can never send a final one.
   *
   * @param options.targets send to these of {@link targets} only (the others' circuits are open).
   */
  sendBatch(
    batch: readonly OutboundMessage[],
    options?: { targets?: readonly string[] },
  ): Promise<readonly MessageOutcome[]>
  /** Lets go of what the sender holds (files, connections). */
  close(): Promise<void>
}

/** How a lane gathers deliveries into one batch. */
export interface Batching {
  /** At most this many messages per {@link DestinationSender.sendBatch}, ≥ 1. */
  maxMessages: number
  /** How long the first message of a batch waits for others, ms (0: at once). */
  maxWaitMs: number
}

/** One message of a batch. */
export interface OutboundMessage {
  /** The delivery's id in the outbox. */
  deliveryId: number
  source: string
  /** The message as the destination's function left it (it has its `messageId`). */
  message: DeliverableMessage
}

/**
 * One request a destination made for a message, as the delivery log shows it and the breaker
 * judges its target (`url` is the target): its status, or why no answer came.
 */
export type TargetRequest = DeliveryAttempt

/** What became of one message of a batch. */
export type MessageOutcome =
  | {
      kind: 'delivered'
      /** The requests made (each target's), for the delivery log and the breaker. */
      requests?: readonly TargetRequest[]
      /**
       * Facts about the delivery beyond its requests (an archive's file, a warehouse's conflicts):
       * what the module's {@link DestinationModule.metrics} count. Seen by the attempt's observers;
       * what a person should read goes in a request's `responseBody`, which the delivery log keeps.
       */
      detail?: Readonly<Record<string, unknown>>
    }
  | {
      kind: 'failed'
      /** Worth another attempt on the retry rule; otherwise dead-lettered at once. */
      retryable: boolean
      /** Why, for people (the delivery log keeps it; targets in it are shown whole to admins). */
      error: string
      requests?: readonly TargetRequest[]
      /** The longest wait a target asked for before the next attempt, ms. */
      retryAfterMs?: number
    }

/** The platform's default batching: one message at a time, at once. */
export const ONE_AT_A_TIME: Batching = Object.freeze({ maxMessages: 1, maxWaitMs: 0 })

/** A target's limits (docs/delivery-controls.md), each counted across every relay on the store. */
export interface TargetLimits {
  /** Requests per second at most, > 0 (with at most one second's worth in a burst). */
  readonly ratePerSecond?: number
  /** Requests in flight at once at most, an integer ≥ 1. */
  readonly maxInFlight?: number
}
