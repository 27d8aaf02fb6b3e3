import { createHash, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { writeKeyDigest } from '../kit/write-key-digest'
import { HttpError } from './http-error'

// Secrets are compared as SHA-256 digests: equal lengths for timingSafeEqual, and the time taken
// says nothing about how much of a guess matched, nor how long the secret is.
function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest()
}

// How a client names its source, for the 401 that says it did not.
const HOW_TO_SEND =
  'send the write key as the user of Basic auth (Authorization: Basic base64(writeKey + ":")) or, with no Authorization header, as the body\'s "writeKey"'

/**
 * Looks up sources by write key, in memory: the key's SHA-256 digest is looked up among the
 * digests of every live key (the store keeps API sources' keys only as digests, and no request
 * waits for it). A lookup by digest says nothing of how much of a guess matched.
 */
export class WriteKeys<Source> {
  /** Each source by the digest (hex) of each of its write keys. */
  readonly #byDigest: ReadonlyMap<string, Source>

  constructor(entries: readonly (readonly [writeKeyDigest: string, source: Source])[]) {
    this.#byDigest = new Map(entries)
  }

  /**
   * The source whose write key is the Basic auth user of `req` (the password is ignored, as the
   * SDKs send it empty), or `undefined` when `req` has no `Authorization` header: the write key
   * may then be in the body ({@link fromBody}). Throws a 401 {@link HttpError} for another scheme,
   * an empty user or an unknown key.
   */
  fromAuthorization(req: IncomingMessage): Source | undefined {
    const header = req.headers.authorization
    if (header === undefined) return undefined
    const writeKey = basicUser(header)
    if (writeKey === undefined) throw unauthorized(`${HOW_TO_SEND}; the Authorization header is not that`)
    return this.#find(writeKey)
  }

  /**
   * The source whose write key is the body's `writeKey` field, for clients that send no
   * `Authorization` header. Throws a 401 {@link HttpError} when it is missing or unknown.
   */
  fromBody(body: Record<string, unknown>): Source {
    const writeKey = body['writeKey']
    if (typeof writeKey !== 'string' || writeKey.length === 0) throw unauthorized(HOW_TO_SEND)
    return this.#find(writeKey)
  }

  #find(writeKey: string): Source {
    const found = this.#byDigest.get(writeKeyDigest(writeKey))
    // Never the key itself in the answer: it may be another source's key mistyped.
    if (found === undefined) throw unauthorized('unknown write key')
    return found
  }
}

/** Who a request to the admin API is: the admin token, or the read token (`readToken`). */
export type TokenRole = 'admin' | 'read'

// What the read token may do: read.
const READ_METHODS = new Set(['GET', 'HEAD'])

/**
 * Checks the admin API's `Authorization: Bearer <token>` in constant time: the admin token, or the
 * read token, which reads and changes nothing.
 */
export class AdminToken {
  /** The token's digest; `undefined` when no token is configured (the admin API is closed). */
  readonly #digest: Buffer | undefined
  /** The read token's digest, when one is configured. */
  readonly #readDigest: Buffer | undefined

  constructor(token: string | undefined, readToken?: string) {
    this.#digest = token === undefined ? undefined : digest(token)
    this.#readDigest = readToken === undefined ? undefined : digest(readToken)
  }

  /** Whether a token is configured at all (without one, nothing is accepted). */
  get configured(): boolean {
    return this.#digest !== undefined || this.#readDigest !== undefined
  }

  /**
   * Which token `token` is (the operator page's sign-in takes either), compared in constant time;
   * `undefined` when it is neither.
   */
  roleOf(token: string): TokenRole | undefined {
    const given = digest(token)
    if (this.#digest !== undefined && timingSafeEqual(this.#digest, given)) return 'admin'
    if (this.#readDigest !== undefined && timingSafeEqual(this.#readDigest, given)) return 'read'
    return undefined
  }

  /** Whether a read token is configured (the sign-in page then says either token signs in). */
  get readable(): boolean {
    return this.#readDigest !== undefined
  }

  /**
   * Which token `req` carries. Throws a 401 {@link HttpError} when it carries neither, and a 403
   * (`ERR_READ_ONLY`) when the read token asks for anything but a read.
   */
  authenticate(req: IncomingMessage): TokenRole {
    if (!this.configured)
      throw unauthorized('the admin API is closed: the relay has no adminToken configured', 'Bearer')
    const header = req.headers.authorization
    const match = header === undefined ? null : /^Bearer\s+(.+)$/i.exec(header)
    if (match === null) throw unauthorized('send the admin token: Authorization: Bearer <adminToken>', 'Bearer')
    const given = digest(match[1]!.trim())
    if (this.#digest !== undefined && timingSafeEqual(this.#digest, given)) return 'admin'
    if (this.#readDigest === undefined || !timingSafeEqual(this.#readDigest, given))
      throw unauthorized('wrong admin token', 'Bearer')
    if (!READ_METHODS.has(req.method ?? 'GET')) throw readOnly()
    return 'read'
  }
}

/** The 403 for a change asked with the read token (`ERR_READ_ONLY`), on the API and the page. */
export function readOnly(): HttpError {
  return new HttpError(403, 'ERR_READ_ONLY', 'the read token reads and changes nothing: use the admin token')
}

function basicUser(header: string): string | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header)
  if (match === null) return undefined
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  const user = colon === -1 ? decoded : decoded.slice(0, colon)
  return user.length === 0 ? undefined : user
}

function unauthorized(message: string, challenge = 'Basic realm="tracklet"'): HttpError {
  return new HttpError(401, 'ERR_UNAUTHORIZED', message, { 'www-authenticate': challenge })
}
