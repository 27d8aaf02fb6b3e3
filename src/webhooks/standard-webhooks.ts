import { createHmac, timingSafeEqual } from 'node:crypto'
import { toBodyBytes } from './sign'

// The Standard Webhooks convention: a secret is "whsec_" followed by the base64 of the key.
const SECRET_PREFIX = 'whsec_'
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

/** The default `toleranceSeconds` of {@link verifyStandardWebhook}: 5 minutes, as the spec advises. */
export const STANDARD_WEBHOOK_TOLERANCE_SECONDS = 5 * 60

/**
 * The HMAC key of a Standard Webhooks secret: the base64-decoded part of a `whsec_…` secret, or
 * the UTF-8 bytes of any other string (a receiver using the `standardwebhooks` package then
 * passes `{ format: 'raw' }`). `undefined` when the secret is empty or its base64 is invalid.
 */
export function standardWebhookKey(secret: string): Buffer | undefined {
  if (typeof secret !== 'string') return undefined
  if (!secret.startsWith(SECRET_PREFIX)) return secret === '' ? undefined : Buffer.from(secret, 'utf8')
  const encoded = secret.slice(SECRET_PREFIX.length)
  if (encoded === '' || !BASE64.test(encoded)) return undefined
  return Buffer.from(encoded, 'base64')
}

function signWithKey(key: Buffer, id: string, timestamp: number, body: Uint8Array): Buffer {
  return createHmac('sha256', key).update(`${id}.${timestamp}.`, 'utf8').update(body).digest()
}

/** What a Standard Webhooks request is signed over. */
export interface StandardWebhookInput {
  /** `webhook-id`: the message's id, the same on every retry (receivers de-duplicate on it). */
  id: string
  /** `webhook-timestamp`: when this attempt is sent, in unix seconds. */
  timestamp: number
  /** The exact body sent. */
  body: string | Uint8Array
  /** One secret, or several during a rotation (one signature each). */
  secrets: string | readonly string[]
}

/**
 * The three Standard Webhooks headers for a request: `webhook-id`, `webhook-timestamp` and
 * `webhook-signature` (`v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, space-separated, one
 * per secret). Also useful to sign fixtures in a receiver's own tests.
 *
 * @throws {TypeError} when a secret is empty or not valid `whsec_` base64.
 */
export function signStandardWebhook(input: StandardWebhookInput): Record<string, string> {
  const body = toBodyBytes(input.body)
  const secrets = typeof input.secrets === 'string' ? [input.secrets] : input.secrets
  const signatures = secrets.map((secret, index) => {
    const key = standardWebhookKey(secret)
    if (key === undefined)
      throw new TypeError(`signStandardWebhook: secrets[${index}] is empty or not valid whsec_ base64`)
    return `v1,${signWithKey(key, input.id, input.timestamp, body).toString('base64')}`
  })
  return {
    'webhook-id': input.id,
    'webhook-timestamp': String(input.timestamp),
    'webhook-signature': signatures.join(' '),
  }
}

/** Request headers as Node gives them (`req.headers`) or as a fetch `Headers`. */
export type IncomingHeaders = Headers | Record<string, string | string[] | undefined>

/** Options of {@link verifyStandardWebhook}. */
export interface VerifyStandardWebhookOptions {
  /**
   * How far `webhook-timestamp` may be from now, either way, in seconds. Older requests are
   * refused as replays, newer ones as forged.
   * @default 300
   */
  toleranceSeconds?: number
  /** The current time in epoch milliseconds (for tests). @default Date.now() */
  now?: number
}

/**
 * Whether a request carries a valid Standard Webhooks signature of `rawBody`: its timestamp is
 * within the tolerance and one of its `v1` signatures matches one of `secrets` (pass the new and
 * the old secret during a rotation). Constant-time; never throws — anything malformed is `false`.
 */
export function verifyStandardWebhook(
  rawBody: string | Uint8Array,
  headers: IncomingHeaders,
  secrets: string | readonly string[],
  options: VerifyStandardWebhookOptions = {},
): boolean {
  try {
    const id = header(headers, 'webhook-id')
    const timestampText = header(headers, 'webhook-timestamp')
    const signatures = header(headers, 'webhook-signature')
    if (id === undefined || timestampText === undefined || signatures === undefined) return false
    if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) return false
    if (!/^\d{1,15}$/.test(timestampText)) return false

    const timestamp = Number(timestampText)
    const now = Math.floor((options.now ?? Date.now()) / 1000)
    const tolerance = options.toleranceSeconds ?? STANDARD_WEBHOOK_TOLERANCE_SECONDS
    if (Math.abs(now - timestamp) > tolerance) return false

    const body = toBodyBytes(rawBody)
    const keys = (typeof secrets === 'string' ? [secrets] : secrets).map(standardWebhookKey)
    const expected = keys.flatMap((key) => (key === undefined ? [] : [signWithKey(key, id, timestamp, body)]))
    const given = signatures
      .split(' ')
      .flatMap((entry) => (entry.startsWith('v1,') ? [Buffer.from(entry.slice(3), 'base64')] : []))
    // Check every pair, without stopping early, so the time taken says nothing about which matched.
    let matched = false
    for (const candidate of given) {
      for (const signature of expected) {
        if (candidate.length === signature.length && timingSafeEqual(candidate, signature)) matched = true
      }
    }
    return matched
  } catch {
    // Only reachable through hostile inputs (a throwing Headers getter); the answer is still no.
    return false
  }
}

function header(headers: IncomingHeaders, name: string): string | undefined {
  if (typeof Headers !== 'undefined' && headers instanceof Headers) return headers.get(name) ?? undefined
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name) continue
    const text = Array.isArray(value) ? value[0] : value
    return typeof text === 'string' && text !== '' ? text : undefined
  }
  return undefined
}
