import type { Message } from '../shared/message'
import type { ApiError } from './api-error'

/** The stable codes of every error the client reports. Match on `code`, not on the text. */
export type AnalyticsErrorCode =
  | 'ERR_INVALID_MESSAGE'
  | 'ERR_MESSAGE_TOO_LARGE'
  | 'ERR_QUEUE_FULL'
  | 'ERR_CLOSED'
  | 'ERR_DELIVERY'
  | 'ERR_FILTERED'

interface AnalyticsErrorDetails {
  /** The message concerned, as it was (or would have been) sent. */
  analyticsMessage: Message
  /** The underlying error, when there is one. */
  cause?: unknown
  /** Every message the error concerns (a failed batch's, on the `'error'` event); else `[analyticsMessage]`. */
  messages?: readonly Message[] | undefined
}

/**
 * Marks every Tracklet analytics error, whichever copy of the module made it: `Symbol.for` gives
 * the same symbol to the ESM and the CommonJS builds loaded side by side in one process.
 */
const BRAND = Symbol.for('tracklet.AnalyticsError')

/** The code each subclass stands for, to recognise its instances from another copy of the module. */
const CODE_OF_CLASS = new WeakMap<abstract new (...args: never[]) => unknown, AnalyticsErrorCode>()

/**
 * The base class of every error the client reports, through a call's callback and the
 * `'error'` event. The client never throws these into the caller.
 *
 * Test an error by its `code` (`err?.code === 'ERR_QUEUE_FULL'`): that works whatever copy of
 * the package made it. `instanceof` works too, across copies: an app that loads both the ESM
 * and the CommonJS build has two of each class, so `instanceof` here recognises any Tracklet
 * analytics error by a brand (`Symbol.for('tracklet.AnalyticsError')`), and a subclass
 * (`instanceof QueueFullError`) by its `code`.
 */
export class AnalyticsError extends Error {
  static {
    // On the prototype, not each instance: never enumerable, never in a logged object.
    Object.defineProperty(AnalyticsError.prototype, BRAND, { value: true })
  }

  /**
   * Whether `value` is an error of this class, made by this copy of the module or another.
   * For a class of this module other than `AnalyticsError`, an error from another copy is
   * recognised by its `code`; a subclass of your own is recognised by its prototype chain only.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class right of instanceof, a subclass included
    return isErrorOf(this, value)
  }

  /**
   * A stable code to match on: the robust way to tell errors apart, as it holds whichever copy
   * of the package (ESM or CommonJS build) made the error. The codes are `AnalyticsErrorCode`.
   */
  readonly code: AnalyticsErrorCode
  /** The message concerned (for a refused call: its fields as given, with `type`). */
  readonly analyticsMessage: Message
  /**
   * Every message the error concerns, `analyticsMessage` first. A batch that fails is reported to
   * the `'error'` event once, with all of its messages here; each callback gets an error of its own.
   */
  readonly messages: readonly Message[]

  constructor(code: AnalyticsErrorCode, text: string, details: AnalyticsErrorDetails) {
    super(text, details.cause === undefined ? undefined : { cause: details.cause })
    this.name = new.target.name
    this.code = code
    this.analyticsMessage = details.analyticsMessage
    this.messages = details.messages ?? [details.analyticsMessage]
  }
}

/** A call's fields are invalid or cannot be serialised to JSON. Fix the call; it was not sent. */
export class InvalidMessageError extends AnalyticsError {
  static {
    CODE_OF_CLASS.set(InvalidMessageError, 'ERR_INVALID_MESSAGE')
  }

  constructor(problem: string, details: AnalyticsErrorDetails) {
    super('ERR_INVALID_MESSAGE', `invalid ${details.analyticsMessage.type} call: ${problem}`, details)
  }
}

/** A message's JSON is over the per-message limit, in UTF-8 bytes. It was not sent. */
export class MessageTooLargeError extends AnalyticsError {
  static {
    CODE_OF_CLASS.set(MessageTooLargeError, 'ERR_MESSAGE_TOO_LARGE')
  }

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
  static {
    CODE_OF_CLASS.set(QueueFullError, 'ERR_QUEUE_FULL')
  }

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
  static {
    CODE_OF_CLASS.set(ClosedError, 'ERR_CLOSED')
  }

  constructor(reason: string, details: AnalyticsErrorDetails) {
    super('ERR_CLOSED', `analytics client closed: ${reason}`, details)
  }
}

/** The tracking API did not accept the batch holding the message, after any retries. */
export class DeliveryError extends AnalyticsError {
  static {
    CODE_OF_CLASS.set(DeliveryError, 'ERR_DELIVERY')
  }

  /** The HTTP status of the last answer, or `undefined` when no answer came (network, timeout). */
  readonly status: number | undefined
  /** How many requests were made for the message. */
  readonly attempts: number
  /**
   * What the API said of its refusal, when its answer's body says (a relay's
   * `{ error: { code, message } }`, such as `ERR_UNKNOWN_WRITE_KEY`); also in the error's message.
   */
  readonly apiError: ApiError | undefined

  constructor(
    reason: string,
    info: { url: string; status: number | undefined; attempts: number; apiError?: ApiError | undefined },
    details: AnalyticsErrorDetails,
  ) {
    super('ERR_DELIVERY', `delivery failed: POST ${info.url}: ${reason}`, details)
    this.status = info.status
    this.attempts = info.attempts
    this.apiError = info.apiError
  }
}

/**
 * `beforeSend` returned `null` or `undefined`: the application dropped the message, which was not
 * sent. Given to the call's callback only, never emitted as `'error'` (the application chose it),
 * and counted in `stats().filtered`, not `failed`.
 */
export class FilteredError extends AnalyticsError {
  static {
    CODE_OF_CLASS.set(FilteredError, 'ERR_FILTERED')
  }

  constructor(details: AnalyticsErrorDetails) {
    super('ERR_FILTERED', `${details.analyticsMessage.type} message dropped by beforeSend`, details)
  }
}

/** `value instanceof errorClass`, recognising errors from another copy of this module by brand and code. */
function isErrorOf(errorClass: abstract new (...args: never[]) => unknown, value: unknown): boolean {
  if (Function.prototype[Symbol.hasInstance].call(errorClass, value)) return true
  if (typeof value !== 'object' || value === null || (value as Record<symbol, unknown>)[BRAND] !== true) return false
  if (errorClass === AnalyticsError) return true
  const code = CODE_OF_CLASS.get(errorClass)
  return code !== undefined && (value as { code?: unknown }).code === code
}
