import type { Dispatcher } from 'undici'
import { describe, isPlainObject } from '../shared/validate'
import { WebhookConfigError } from './errors'
import { DEFAULT_RESPONSE_BODY_LIMIT, DEFAULT_TIMEOUT_MS, MAX_RESPONSE_BODY_LIMIT, MAX_TIMEOUT_MS } from './limits'
import { standardWebhookKey } from './standard-webhooks'

/** One customer endpoint. */
export interface WebhookEntry {
  /** A full `http:` or `https:` URL, such as `https://hooks.example.com/tracklet`. */
  url: string
  /** Static headers added to every request to this URL, such as `{ 'X-Team': 'growth' }`. */
  headers?: Readonly<Record<string, string>>
}

/** Standard Webhooks signing, with its own secrets (several during a rotation). */
export interface StandardWebhooksSettings {
  /**
   * The secrets to sign with, each `whsec_<base64 key>` (the spec's form) or any other non-empty
   * string (used as UTF-8 bytes). Every secret adds one signature; list the new and the old one
   * while receivers move over.
   */
  secrets: readonly string[]
}

/** The destination's settings, as a customer configures them. */
export interface WebhookSettings {
  /** The endpoints: 1 to 5. Each message is POSTed to all of them. */
  webhooks: readonly WebhookEntry[]
  /** When set, every request carries `X-Signature`: the hex HMAC-SHA1 of the body. */
  sharedSecret?: string | undefined
  /**
   * Adds the Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`),
   * which give receivers replay protection and secret rotation. `true` signs with `sharedSecret`;
   * an object names its own secrets.
   * @default false
   */
  standardWebhooks?: boolean | StandardWebhooksSettings | undefined
}

/** How the destination sends. */
export interface WebhookDestinationOptions {
  /**
   * How long one request may take — connecting, TLS, and waiting for the response headers —
   * in milliseconds. A receiver that has not answered by then has timed out.
   * @default 5000
   */
  timeout?: number
  /**
   * The undici `Dispatcher` the requests go through: an `Agent` with a custom CA or a connection
   * guard, a `ProxyAgent`, a `MockAgent` in tests.
   * @default undici's global dispatcher
   */
  dispatcher?: Dispatcher
  /**
   * How much of a failed request's answer (any status but 2xx) to keep with the attempt, in
   * bytes: what tells a receiver's team what broke. 0 keeps none. At most {@link MAX_RESPONSE_BODY_LIMIT}.
   * @default 4096
   */
  responseBodyLimit?: number
}

/** The settings and options after validation: what a delivery works from. */
export interface ResolvedWebhooks {
  readonly webhooks: readonly {
    readonly url: string
    readonly target: URL
    readonly headers: Readonly<Record<string, string>>
  }[]
  readonly sharedSecret: string | undefined
  readonly standardSecrets: readonly string[] | undefined
  readonly timeout: number
  readonly dispatcher: Dispatcher | undefined
  readonly responseBodyLimit: number
}

/** The most endpoints one destination may have (the platform's limit). */
export const MAX_WEBHOOKS = 5

// RFC 9110 token and field-value (no control characters but tab).
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/
// Set by the destination itself, or framing and hop-by-hop headers the transport owns.
const RESERVED_HEADERS = new Set([
  'user-agent',
  'content-type',
  'x-signature',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'expect',
  'te',
  'trailer',
])

const SETTINGS_KEYS = new Set(['webhooks', 'sharedSecret', 'standardWebhooks'])
const ENTRY_KEYS = new Set(['url', 'headers'])
const OPTIONS_KEYS = new Set(['timeout', 'dispatcher', 'responseBodyLimit'])

/** Where a check records a problem: the setting's path and what is wrong with it. */
type Report = (setting: string, problem: string) => void

/**
 * Validates the settings and options once and returns them frozen; the caller's objects are
 * copied, never kept or changed.
 * @throws {WebhookConfigError} naming the first invalid setting.
 */
export function resolveWebhooks(settings: unknown, options?: unknown): ResolvedWebhooks {
  const problems = webhookConfigProblems(settings, options)
  if (problems.length > 0) throw problems[0]
  return resolveChecked(settings, options, () => {})
}

/**
 * Every problem of the settings and options, in the order {@link resolveWebhooks} meets them: the
 * relay names them all at once (a misspelt key and a bad URL alike), where the destination's
 * constructor throws the first.
 */
export function webhookConfigProblems(settings: unknown, options?: unknown): WebhookConfigError[] {
  const problems: WebhookConfigError[] = []
  resolveChecked(settings, options, (setting, problem) => problems.push(new WebhookConfigError(setting, problem)))
  return problems
}

// Resolves what it can, reporting each problem and going on past it; what it returns is whole
// only when nothing was reported.
function resolveChecked(settings: unknown, options: unknown, report: Report): ResolvedWebhooks {
  if (!isPlainObject(settings)) {
    report('settings', `must be an object, got ${describe(settings)}`)
    const none = { webhooks: [], sharedSecret: undefined, standardSecrets: undefined }
    return Object.freeze({ ...none, ...resolveOptions(options, report) })
  }
  rejectUnknownKeys(settings, SETTINGS_KEYS, '', report)

  const sharedSecret = resolveSecret(settings['sharedSecret'], 'sharedSecret', report)
  const webhooks = resolveEntries(settings['webhooks'], report)
  const standardSecrets = resolveStandard(settings['standardWebhooks'], sharedSecret, report)
  return Object.freeze({ webhooks, sharedSecret, standardSecrets, ...resolveOptions(options, report) })
}

function resolveEntries(webhooks: unknown, report: Report): ResolvedWebhooks['webhooks'] {
  if (!Array.isArray(webhooks) || webhooks.length < 1 || webhooks.length > MAX_WEBHOOKS) {
    const got = Array.isArray(webhooks) ? `${webhooks.length} entries` : describe(webhooks)
    report('webhooks', `must list 1 to ${MAX_WEBHOOKS} webhooks ({ url, headers? }), got ${got}`)
    if (!Array.isArray(webhooks)) return []
  }
  const entries: ResolvedWebhooks['webhooks'][number][] = []
  webhooks.forEach((entry: unknown, index) => {
    const path = `webhooks[${index}]`
    if (!isPlainObject(entry)) {
      report(path, `must be an object { url, headers? }, got ${describe(entry)}`)
      return
    }
    rejectUnknownKeys(entry, ENTRY_KEYS, `${path}.`, report)
    const url = entry['url']
    const target = resolveUrl(url, `${path}.url`, report)
    const headers = resolveHeaders(entry['headers'], `${path}.headers`, report)
    if (target !== undefined) entries.push(Object.freeze({ url: url as string, target, headers }))
  })
  return Object.freeze(entries)
}

function resolveUrl(url: unknown, path: string, report: Report): URL | undefined {
  const allowed = 'a full http: or https: URL, such as "https://hooks.example.com/tracklet"'
  if (typeof url !== 'string') return void report(path, `must be ${allowed}, got ${describe(url)}`)
  let target: URL
  try {
    target = new URL(url)
  } catch {
    return void report(path, `must be ${allowed}, got ${describe(url)}`)
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    return void report(path, `must be ${allowed}, got the protocol ${JSON.stringify(target.protocol)}`)
  }
  // Credentials in a URL end up in logs and delivery records; headers are the place for them.
  if (target.username !== '' || target.password !== '') {
    return void report(path, 'must not contain credentials (user:password@); send them in headers, e.g. Authorization')
  }
  return target
}

function resolveHeaders(headers: unknown, path: string, report: Report): Readonly<Record<string, string>> {
  if (headers === undefined) return Object.freeze({})
  if (!isPlainObject(headers)) {
    report(path, `must be an object of header names to string values, got ${describe(headers)}`)
    return Object.freeze({})
  }
  const seen = new Set<string>()
  const copy: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    const problem = headerProblem(name, value, seen)
    if (problem === undefined) copy[name] = value as string
    // A name that is no header name is named in the message, under the headers' own path.
    else report(problem.atName ? `${path}.${name}` : path, problem.text)
  }
  return Object.freeze(copy)
}

// What is wrong with one header, if anything; `atName` says the problem's path ends in its name.
function headerProblem(name: string, value: unknown, seen: Set<string>): { atName: boolean; text: string } | undefined {
  const lower = name.toLowerCase()
  if (!HEADER_NAME.test(name)) {
    const text = `${JSON.stringify(name)} is not a valid HTTP header name (letters, digits and !#$%&'*+-.^_\`|~ only)`
    return { atName: false, text }
  }
  if (RESERVED_HEADERS.has(lower)) {
    return { atName: true, text: 'is set by the destination or the transport and cannot be configured' }
  }
  if (seen.has(lower)) return { atName: true, text: 'is given twice (header names are case-insensitive)' }
  seen.add(lower)
  // Header values are often credentials: say what is wrong, never echo the value.
  if (typeof value !== 'string') return { atName: true, text: `must be a string, got ${kindOf(value)}` }
  if (!HEADER_VALUE.test(value)) {
    const text =
      'must be a valid HTTP header value: no line breaks or other control characters, no characters beyond U+00FF'
    return { atName: true, text }
  }
  return undefined
}

function resolveSecret(secret: unknown, path: string, report: Report): string | undefined {
  if (secret === undefined) return undefined
  if (typeof secret !== 'string' || secret === '') {
    return void report(path, `must be a non-empty string when set, got ${kindOf(secret)}`)
  }
  return secret
}

function resolveStandard(
  setting: unknown,
  sharedSecret: string | undefined,
  report: Report,
): readonly string[] | undefined {
  const path = 'standardWebhooks'
  if (setting === undefined || setting === false) return undefined
  if (setting === true) {
    if (sharedSecret === undefined) {
      return void report(path, 'is true but sharedSecret is not set: set sharedSecret, or give { secrets: [...] }')
    }
    checkStandardSecret(sharedSecret, 'sharedSecret', report)
    return Object.freeze([sharedSecret])
  }
  if (!isPlainObject(setting)) {
    return void report(path, `must be true, false or { secrets: [...] }, got ${describe(setting)}`)
  }
  rejectUnknownKeys(setting, new Set(['secrets']), `${path}.`, report)
  const secrets = setting['secrets']
  if (!Array.isArray(secrets) || secrets.length === 0) {
    const got = Array.isArray(secrets) ? 'an empty array' : describe(secrets)
    return void report(`${path}.secrets`, `must be a non-empty array of secrets, got ${got}`)
  }
  return Object.freeze(
    secrets.flatMap((secret: unknown, index) => {
      const where = `${path}.secrets[${index}]`
      if (secret === undefined) {
        report(where, 'must be a non-empty string, got undefined')
        return []
      }
      const resolved = resolveSecret(secret, where, report)
      if (resolved === undefined) return []
      checkStandardSecret(resolved, where, report)
      return [resolved]
    }),
  )
}

// A whsec_ secret must carry a key the receiver can decode the same way.
function checkStandardSecret(secret: string, path: string, report: Report): void {
  if (standardWebhookKey(secret) === undefined) {
    report(path, "starts with whsec_ but what follows is not valid base64 (the spec's form is whsec_<base64 key>)")
  }
}

function resolveOptions(
  options: unknown,
  report: Report,
): Pick<ResolvedWebhooks, 'timeout' | 'dispatcher' | 'responseBodyLimit'> {
  const defaults = {
    timeout: DEFAULT_TIMEOUT_MS,
    dispatcher: undefined,
    responseBodyLimit: DEFAULT_RESPONSE_BODY_LIMIT,
  }
  if (options === undefined) return defaults
  if (!isPlainObject(options)) {
    const got = describe(options)
    report('options', `must be an object { timeout?, dispatcher?, responseBodyLimit? }, got ${got}`)
    return defaults
  }
  rejectUnknownKeys(options, OPTIONS_KEYS, 'options.', report)
  let timeout = options['timeout'] ?? DEFAULT_TIMEOUT_MS
  if (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 1 || timeout > MAX_TIMEOUT_MS) {
    report(
      'options.timeout',
      `must be a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS}, got ${describe(timeout)}`,
    )
    timeout = DEFAULT_TIMEOUT_MS
  }
  let dispatcher = options['dispatcher']
  if (
    dispatcher !== undefined &&
    (typeof dispatcher !== 'object' || dispatcher === null || typeof (dispatcher as Dispatcher).dispatch !== 'function')
  ) {
    report(
      'options.dispatcher',
      `must be an undici Dispatcher (an Agent, a ProxyAgent, a MockAgent), got ${describe(dispatcher)}`,
    )
    dispatcher = undefined
  }
  let responseBodyLimit = options['responseBodyLimit'] ?? DEFAULT_RESPONSE_BODY_LIMIT
  if (
    typeof responseBodyLimit !== 'number' ||
    !Number.isInteger(responseBodyLimit) ||
    responseBodyLimit < 0 ||
    responseBodyLimit > MAX_RESPONSE_BODY_LIMIT
  ) {
    report(
      'options.responseBodyLimit',
      `must be a whole number of bytes from 0 to ${MAX_RESPONSE_BODY_LIMIT}, got ${describe(responseBodyLimit)}`,
    )
    responseBodyLimit = DEFAULT_RESPONSE_BODY_LIMIT
  }
  return {
    timeout: timeout as number,
    dispatcher: dispatcher as Dispatcher | undefined,
    responseBodyLimit: responseBodyLimit as number,
  }
}

function rejectUnknownKeys(
  object: Record<string, unknown>,
  known: ReadonlySet<string>,
  prefix: string,
  report: Report,
): void {
  for (const key of Object.keys(object)) {
    if (!known.has(key)) report(`${prefix}${key}`, `is not a known setting; allowed: ${[...known].join(', ')}`)
  }
}

// What a value is, without what it holds: for secrets and header values, which may be credentials.
function kindOf(value: unknown): string {
  if (value === null || value === undefined) return String(value)
  if (Array.isArray(value)) return 'an array'
  if (value === '') return 'an empty string'
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`
}
