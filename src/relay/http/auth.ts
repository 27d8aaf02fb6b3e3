import { createHash, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { HttpError } from './http-error'

// Secrets are compared as SHA-256 digests: equal lengths for timingSafeEqual, and the time taken
// says nothing about how much of a guess matched, nor how long the secret is.
function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest()
}

/** Looks up sources by write key in constant time: every key is compared on every request. */
export class WriteKeys<Source> {
  /** Each source with the digest of its write key. */
  readonly #entries: { digest: Buffer; source: Source }[]

  constructor(entries: readonly (readonly [writeKey: string, source: Source])[]) {
    this.#entries = entries.map(([writeKey, source]) => ({ digest: digest(writeKey), source }))
  }

  /**
   * The source whose write key is the Basic auth user of `req` (the password is ignored, as the
   * SDKs send it empty). Throws a 401 {@link HttpError} when there is none.
   */
  authenticate(req: IncomingMessage): Source {
    const writeKey = basicUser(req.headers.authorization)
    if (writeKey === undefined) {
      throw unauthorized(
        'send the write key as the user of Basic auth: Authorization: Basic base64(writeKey + ":")',
        'Basic realm="tracklet"',
      )
    }
    const candidate = digest(writeKey)
    let found: Source | undefined
    for (const entry of this.#entries) {
      if (timingSafeEqual(entry.digest, candidate) && found === undefined) found = entry.source
    }
    if (found === undefined) throw unauthorized('unknown write key', 'Basic realm="tracklet"')
    return found
  }
}

/** Checks the admin API's `Authorization: Bearer <token>` in constant time. */
export class AdminToken {
  /** The token's digest; `undefined` when no token is configured (the admin API is closed). */
  readonly #digest: Buffer | undefined

  constructor(token: string | undefined) {
    this.#digest = token === undefined ? undefined : digest(token)
  }

  /** Whether a token is configured at all (without one, nothing is accepted). */
  get configured(): boolean {
    return this.#digest !== undefined
  }

  /** Whether `token` is the admin token, compared in constant time. */
  matches(token: string): boolean {
    return this.#digest !== undefined && timingSafeEqual(this.#digest, digest(token))
  }

  /** Throws a 401 {@link HttpError} unless `req` carries the admin token. */
  authenticate(req: IncomingMessage): void {
    if (this.#digest === undefined)
      throw unauthorized('the admin API is closed: the relay has no adminToken configured', 'Bearer')
    const header = req.headers.authorization
    const match = header === undefined ? null : /^Bearer\s+(.+)$/i.exec(header)
    if (match === null) throw unauthorized('send the admin token: Authorization: Bearer <adminToken>', 'Bearer')
    if (!this.matches(match[1]!.trim())) throw unauthorized('wrong admin token', 'Bearer')
  }
}

function basicUser(header: string | undefined): string | undefined {
  const match = header === undefined ? null : /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header)
  if (match === null) return undefined
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  const user = colon === -1 ? decoded : decoded.slice(0, colon)
  return user.length === 0 ? undefined : user
}

function unauthorized(message: string, challenge: string): HttpError {
  return new HttpError(401, 'ERR_UNAUTHORIZED', message, { 'www-authenticate': challenge })
}
