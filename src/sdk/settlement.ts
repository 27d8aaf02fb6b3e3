import type { Message } from '../shared/message'
import type { QueuedMessage } from './batch'
import type { AnalyticsError } from './errors'
import type { MessageCallback } from './types'

/** Tells one message's callback how it settled (never the `'error'` event: see `Settlement`). */
export type CallbackReporter = (
  error: AnalyticsError | undefined,
  message: Message,
  callback: MessageCallback | undefined,
) => void

/** Makes the error of a failed batch: one per message for its callback, one for the whole batch. */
export type BatchErrorMaker = (message: Message, batch: readonly Message[] | undefined) => AnalyticsError

export interface SettlementOptions {
  /** Each message's callback. */
  callback: CallbackReporter
  /** The client's `'error'` event: once per failed batch. */
  emitError: (error: AnalyticsError) => void
  /** Whether anyone listens for `'error'`: when not, no batch error is made. */
  hasErrorListeners: () => boolean
}

/**
 * Settles accepted messages exactly once, delivered or failed, and counts them. A failed batch
 * tells each message's callback with an error of its own, and the `'error'` event once, with an
 * error whose `messages` are the whole batch (a refused write key fails every batch the same way:
 * one event per batch, not one per message, says so once).
 */
export class Settlement {
  /** Accepted and waiting to be sent. */
  queued = 0
  /** In a batch being sent (or waiting to be retried). */
  inFlight = 0
  delivered = 0
  failed = 0
  readonly #options: SettlementOptions

  constructor(options: SettlementOptions) {
    this.#options = options
  }

  /** `count` queued messages are handed to a request. */
  start(count: number): void {
    this.queued -= count
    this.inFlight += count
  }

  settleDelivered(messages: readonly QueuedMessage[]): void {
    this.inFlight -= messages.length
    this.delivered += messages.length
    for (const queued of messages) {
      // Parsing back the JSON gives the callback the message exactly as sent, and costs
      // nothing for calls without a callback.
      if (queued.callback !== undefined) this.#options.callback(undefined, parse(queued), queued.callback)
    }
  }

  settleFailed(messages: readonly QueuedMessage[], toError: BatchErrorMaker): void {
    this.inFlight -= messages.length
    this.failed += messages.length
    // Nobody to tell about a message without a callback: spare its parse and its error, which
    // is most of the work when closeAndFlush's deadline fails a large backlog at once.
    const listened = this.#options.hasErrorListeners()
    const parsed: Message[] | undefined = listened ? [] : undefined
    for (const queued of messages) {
      if (queued.callback === undefined && parsed === undefined) continue
      const message = parse(queued)
      parsed?.push(message)
      if (queued.callback !== undefined) {
        this.#options.callback(
          withoutStack(() => toError(message, undefined)),
          message,
          queued.callback,
        )
      }
    }
    if (parsed !== undefined && parsed.length > 0) {
      this.#options.emitError(withoutStack(() => toError(parsed[0]!, parsed)))
    }
  }
}

function parse(queued: QueuedMessage): Message {
  return JSON.parse(queued.json) as Message
}

/**
 * Makes an error without capturing a stack trace. Its stack would show only the publisher's own
 * frames, never the caller's, and capturing one is most of the cost of failing a message: with
 * 100,000 messages failing at closeAndFlush's deadline, it alone overran the deadline by a second.
 * The limit is restored before any callback runs, so the application's own errors keep theirs.
 */
function withoutStack<E>(make: () => E): E {
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  try {
    return make()
  } finally {
    Error.stackTraceLimit = limit
  }
}
