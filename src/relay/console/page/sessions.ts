import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

/** The session cookie's name. */
export const SESSION_COOKIE = 'tracklet_session'

/** A session ends after this long without a request, ms. */
export const SESSION_IDLE_MS = 60 * 60 * 1000
/** And after this long in any case, ms: a stolen cookie is not good forever. */
export const SESSION_MAX_MS = 12 * 60 * 60 * 1000
// Signed-in browsers held at once; past it the oldest session ends. Only token holders make
// sessions, but a script signing in in a loop must not grow memory without bound.
const MAX_SESSIONS = 1000

/** A signed-in browser. */
export interface Session {
  /** The token its forms carry in a hidden field; a POST without it is refused (CSRF). */
  readonly csrfToken: string
  readonly createdAt: number
  lastSeenAt: number
}

/**
 * The operator page's sessions, in memory (a restart signs everyone out). The cookie holds a
 * random id; the map is keyed by its SHA-256, so the ids themselves are never kept.
 */
export class Sessions {
  readonly #now: () => number
  /** Sessions by the digest of their id, oldest first (Map keeps insertion order). */
  readonly #byDigest = new Map<string, Session>()

  constructor(now: () => number = Date.now) {
    this.#now = now
  }

  /** Starts a session; returns the id for the cookie. */
  create(): { id: string; session: Session } {
    this.#sweep()
    while (this.#byDigest.size >= MAX_SESSIONS) this.#byDigest.delete(this.#byDigest.keys().next().value!)
    const id = randomBytes(32).toString('base64url')
    const now = this.#now()
    const session: Session = { csrfToken: randomBytes(32).toString('base64url'), createdAt: now, lastSeenAt: now }
    this.#byDigest.set(digest(id), session)
    return { id, session }
  }

  /** The live session named by the request's cookie header, if any; marks it as seen now. */
  find(cookieHeader: string | undefined): Session | undefined {
    const now = this.#now()
    for (const id of cookieValues(cookieHeader, SESSION_COOKIE)) {
      const key = digest(id)
      const session = this.#byDigest.get(key)
      if (session === undefined) continue
      if (isExpired(session, now)) {
        this.#byDigest.delete(key)
        continue
      }
      session.lastSeenAt = now
      return session
    }
    return undefined
  }

  /** Ends the session named by the cookie header (sign-out). */
  end(cookieHeader: string | undefined): void {
    for (const id of cookieValues(cookieHeader, SESSION_COOKIE)) this.#byDigest.delete(digest(id))
  }

  #sweep(): void {
    const now = this.#now()
    for (const [key, session] of this.#byDigest) if (isExpired(session, now)) this.#byDigest.delete(key)
  }
}

/** Whether `sent` is the session's CSRF token, compared in constant time. */
export function isCsrfToken(session: Session, sent: string | null): boolean {
  return (
    sent !== null &&
    timingSafeEqual(createHash('sha256').update(session.csrfToken).digest(), createHash('sha256').update(sent).digest())
  )
}

function isExpired(session: Session, now: number): boolean {
  return now - session.lastSeenAt > SESSION_IDLE_MS || now - session.createdAt > SESSION_MAX_MS
}

function digest(id: string): string {
  return createHash('sha256').update(id).digest('base64url')
}

function cookieValues(header: string | undefined, name: string): string[] {
  if (header === undefined) return []
  const values: string[] = []
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq !== -1 && part.slice(0, eq).trim() === name) values.push(part.slice(eq + 1).trim())
  }
  return values
}
