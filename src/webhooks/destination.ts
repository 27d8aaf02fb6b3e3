import { createHash } from 'node:crypto'
import type { DeliverableMessage } from '../shared/message'
import { serialize } from '../shared/json'
import { WebhookMessageError } from './errors'
import { formatMessage, formatStoredMessage, type WebhookBody } from './format'
import { post, type DeliveryAttempt } from './post'
import {
  resolveWebhooks,
  type ResolvedWebhooks,
  webhookConfigProblems,
  type WebhookDestinationOptions,
  type WebhookSettings,
} from './settings'
import { shownHeaders } from './shown-headers'
import { SEND_STORED, type SendsStored } from './stored'
import { CONFIG_PROBLEMS } from './config-problems-key'
import type { DeliveryResult } from './delivery-result'
import { sign } from './sign'
import { signStandardWebhook } from './standard-webhooks'
import { isRetryableFailure, isSuccess } from './retry-rule'

export type { DeliveryResult }

/** The User-Agent of every request (the platform sends `<vendor>/1.0`). */
export const USER_AGENT = 'Tracklet/1.0'

// The headers of every request besides those configured and the signatures.
const OWN_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'User-Agent': USER_AGENT,
  'Content-Type': 'application/json',
})

/** One webhook as each request to it needs it. */
interface Target {
  readonly url: string
  readonly origin: string
  /** Path and query. */
  readonly path: string
  /** The destination's own headers and the configured ones, without the signatures. */
  readonly headers: Readonly<Record<string, string>>
  /** The configured headers alone (their values are redacted when a failed attempt shows them). */
  readonly configured: Readonly<Record<string, string>>
}

/**
 * The Webhooks destination: POSTs each message, formatted as the platform does and optionally
 * signed, to up to five customer URLs.
 *
 * @example
 * const webhooks = new WebhookDestination({ webhooks: [{ url: 'https://hooks.example.com/a' }], sharedSecret: 's3cret' })
 * const result = await webhooks.send(message) // { ok, retryable, attempts }
 */
export class WebhookDestination {
  /** The validated, frozen settings and options. */
  readonly #config: ResolvedWebhooks
  /** The configured URLs, in order. */
  readonly urls: readonly string[]
  /** Each webhook as its requests need it, worked out once. */
  readonly #targets: readonly Target[]

  /**
   * @throws {WebhookConfigError} (`code: 'ERR_WEBHOOK_CONFIG'`) for any invalid setting or
   * option, naming it, the value received (never a secret) and what is allowed.
   */
  constructor(settings: WebhookSettings, options?: WebhookDestinationOptions) {
    this.#config = resolveWebhooks(settings, options)
    this.urls = Object.freeze(this.#config.webhooks.map((webhook) => webhook.url))
    this.#targets = this.#config.webhooks.map(({ url, target, headers }) => ({
      url,
      origin: target.origin,
      path: `${target.pathname}${target.search}`,
      headers: Object.freeze({ ...OWN_HEADERS, ...headers }),
      configured: headers,
    }))
  }

  /**
   * Makes ONE attempt: serialises the message once, signs those bytes, and POSTs them to every
   * URL concurrently. Resolves with each URL's outcome — it does not retry (the relay's outbox
   * schedules retries with {@link nextAttemptAt}) and does not reject over network errors.
   *
   * `options.urls` sends to those of the configured {@link urls} only (a relay skips a URL whose
   * receiver is down); URLs not configured are ignored.
   *
   * @throws {WebhookMessageError} (rejects) when the message cannot be formatted or serialised;
   * such a message will never be deliverable, so retrying it is pointless.
   */
  send(message: DeliverableMessage, options?: { urls?: readonly string[] }): Promise<DeliveryResult> {
    return this.#send(message, formatMessage, options)
  }

  // The relay's way in (SEND_STORED), set on the prototype rather than declared, so the public
  // type does not show it: a message it validated at ingest is not checked again.
  static {
    const sendStored: SendsStored[typeof SEND_STORED] = function (this: WebhookDestination, message, options) {
      return this.#send(message, formatStoredMessage, options)
    }
    Object.defineProperty(WebhookDestination.prototype, SEND_STORED, { value: sendStored })
    // The relay names every problem of a source's settings at once (CONFIG_PROBLEMS).
    Object.defineProperty(WebhookDestination, CONFIG_PROBLEMS, { value: webhookConfigProblems })
  }

  async #send(
    message: DeliverableMessage,
    format: (message: DeliverableMessage) => WebhookBody,
    options: { urls?: readonly string[] } | undefined,
  ): Promise<DeliveryResult> {
    const serialized = serialize(format(message))
    if (!serialized.ok) throw new WebhookMessageError(serialized.problem)
    const body = Buffer.from(serialized.json, 'utf8')
    const signed = this.#signatureHeaders(body, message)
    const only = options?.urls
    const targets = only === undefined ? this.#targets : this.#targets.filter((target) => only.includes(target.url))
    // One URL (the usual case) needs no Promise.all.
    const attempts =
      targets.length === 1
        ? [await this.#post(targets[0]!, body, signed)]
        : await Promise.all(targets.map((target) => this.#post(target, body, signed)))
    return summarise(attempts)
  }

  #post(target: Target, body: Buffer, signed: Record<string, string>): Promise<DeliveryAttempt> {
    const { timeout, dispatcher, responseBodyLimit } = this.#config
    return post({
      url: target.url,
      origin: target.origin,
      path: target.path,
      headers: { ...target.headers, ...signed },
      body,
      timeout,
      dispatcher,
      responseBodyLimit,
      shownHeaders: () => shownHeaders(OWN_HEADERS, target.configured, signed),
    })
  }

  #signatureHeaders(body: Buffer, message: DeliverableMessage): Record<string, string> {
    const { sharedSecret, standardSecrets } = this.#config
    const headers: Record<string, string> = {}
    if (sharedSecret !== undefined) headers['X-Signature'] = sign(body, sharedSecret)
    if (standardSecrets !== undefined) {
      Object.assign(
        headers,
        signStandardWebhook({
          id: webhookId(message, body),
          // The time of this attempt, so that a retry hours later is not refused as a replay.
          timestamp: Math.floor(Date.now() / 1000),
          body,
          secrets: standardSecrets,
        }),
      )
    }
    return headers
  }
}

// webhook-id must stay the same across retries so receivers can de-duplicate. A message without a
// messageId (a delete may have none) has a body that does not change between attempts: hash it.
function webhookId(message: DeliverableMessage, body: Buffer): string {
  if (typeof message.messageId === 'string' && message.messageId !== '') return message.messageId
  return `msg_${createHash('sha256').update(body).digest('hex').slice(0, 32)}`
}

function summarise(attempts: DeliveryAttempt[]): DeliveryResult {
  if (attempts.some(isSuccess)) return { ok: true, retryable: false, attempts }
  const result: DeliveryResult = { ok: false, retryable: attempts.some(isRetryableFailure), attempts }
  const retryAfters = attempts.flatMap((attempt) => (attempt.retryAfterMs === undefined ? [] : [attempt.retryAfterMs]))
  if (retryAfters.length > 0) result.retryAfterMs = Math.max(...retryAfters)
  return result
}
