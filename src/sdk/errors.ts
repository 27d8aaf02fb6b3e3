import type { Message } from '../shared/message'

/** The stable codes of every error the client reports. Match on `code`, not on the text. */
export type AnalyticsErrorCode =
  | 'ERR_INVALID_MESSAGE'
  | 'ERR_MESSAGE_TOO_LARGE'
  | 'ERR_QUEUE_FULL'
  | 'ERR_CLOSED'
  | 'ERR_DELIVERY'

interface AnalyticsErrorDetails {
  /** The message concerned, as it was (or would have been) sent. */
  analyticsMessage: Message
  /** The underlying error, when there is one. */
  cause?: unknown
}

/**
 * The base class of every error the client reports, through a call's callback and the
 * `'error'` event. The client never throws these into the caller.
 */
export class AnalyticsError extends Error {
  /** A stable code to match on. */
  readonly code: AnalyticsErrorCode
  /** The message concerned (for a refused call: its fields as given, with `type`). */
  readonly analyticsMessage: Message

  constructor(code: AnalyticsErrorCode, text: string, details: AnalyticsErrorDetails) {
    super(text, details.cause === undefined ? undefined : { cause: details.cause })
    this.name = new.target.name
    this.code = code
    this.analyticsMessage = details.analyticsMessage
  }
}

/** A call's fields are invalid or cannot be serialised to JSON. Fix the call; it was not sent. */
export class InvalidMessageError extends AnalyticsError {
  constructor(problem: string, details: AnalyticsErrorDetails) {
    super('ERR_INVALID_MESSAGE', `invalid ${details.analyticsMessage.type} call: ${problem}`, details)
  }
}

/** A message's JSON is over the per-message limit, in UTF-8 bytes. It was not sent. */
export class MessageTooLargeError extends AnalyticsError {
  /** The message's size: UTF-8 bytes of its JSON. */
  readonly bytes: number
  /** The limit it exceeded, in bytes. */
  readonly limit: number

  constructor(bytes: number, limit: number, details: AnalyticsErrorDetails) {
    super(
      'ERR_MESSAGE_TOO_LARGE',
      `${details.analyticsMessage.type} message is ${bytes} bytes of JSON, over the ${limit}-byte limit`,
      details,
    )
    this.bytes = bytes
    this.limit = limit
  }
}

/** `maxQueueSize` messages are already queued or in flight: the call was refused. */
export class QueueFullError extends AnalyticsError {
  constructor(maxQueueSize: number, details: AnalyticsErrorDetails) {
    super(
      'ERR_QUEUE_FULL',
      `queue full: ${maxQueueSize} messages are queued or in flight (maxQueueSize); ${details.analyticsMessage.type} call refused`,
      details,
    )
  }
}

/** The client was closed before the message was accepted or delivered. */
export class ClosedError extends AnalyticsError {
  constructor(reason: string, details: AnalyticsErrorDetails) {
    super('ERR_CLOSED', `analytics client closed: ${reason}`, details)
  }
}

/** The tracking API did not accept the batch holding the message, after any retries. */
export class DeliveryError extends AnalyticsError {
  /** The HTTP status of the last answer, or `undefined` when no answer came (network, timeout). */
  readonly status: number | undefined
  /** How many requests were made for the message. */
  readonly attempts: number

  constructor(
    reason: string,
    info: { url: string; status: number | undefined; attempts: number },
    details: AnalyticsErrorDetails,
  ) {
    super('ERR_DELIVERY', `delivery failed: POST ${info.url}: ${reason}`, details)
    this.status = info.status
    this.attempts = info.attempts
  }
}
