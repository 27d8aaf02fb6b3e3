import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { SessionRole, SessionRow, SessionStore } from '../../store/sessions'

/** The session cookie's name. */
export const SESSION_COOKIE = 'tracklet_session'

/** A session ends after this long without a request, ms. */
export const SESSION_IDLE_MS = 60 * 60 * 1000
/** And after this long in any case, ms: a stolen cookie is not good forever. */
export const SESSION_MAX_MS = 12 * 60 * 60 * 1000
// Signed-in browsers kept at once; past it the oldest sessions end. Only token holders make
// sessions, but a script signing in in a loop must not grow the table without bound.
const MAX_SESSIONS = 1000
// A session's last request is written at most this often, ms: the page reloads every 10 s, and a
// write per reload per browser would cost the store more than an idle limit of an hour needs.
const TOUCH_EVERY_MS = 60 * 1000

/** A signed-in browser. */
export interface Session {
  /** The token its forms carry in a hidden field; a POST without it is refused (CSRF). */
  readonly csrfToken: string
  /** Which token signed it in: a `read` session sees the page without its actions. */
  readonly role: SessionRole
  readonly createdAt: number
  readonly lastSeenAt: number
}

/**
 * The operator page's sessions, kept in the relay's store so that every relay and every worker
 * of `tracklet relay --workers N` on it honours them (a request may land on any of them) and a
 * sign-out through one ends the session everywhere. The cookie holds a random token; the store
 * keeps only its SHA-256. The CSRF token is derived from the cookie's token (an HMAC keyed by
 * it), so it is stored nowhere and any process can tell it, while a page that leaks it leaks
 * nothing that signs in.
 */
export class Sessions {
  readonly #store: SessionStore
  readonly #now: () => number
  /**
   * The sessions this process found live in the store, by digest, oldest first: asked only when
   * the store cannot answer, so a signed-in operator still sees the outage page rather than a
   * sign-in that cannot work either. (A sign-out elsewhere cannot be written then, nor seen.)
   */
  readonly #known = new Map<string, SessionRow>()

  constructor(store: SessionStore, now: () => number = Date.now) {
    this.#store = store
    this.#now = now
  }

  /** Starts a session signed in with `role`'s token; returns the token for the cookie. */
  async create(role: SessionRole): Promise<{ id: string; session: Session }> {
    const now = this.#now()
    await this.#store.sweep(now - SESSION_IDLE_MS, now - SESSION_MAX_MS, MAX_SESSIONS - 1)
    const id = randomBytes(32).toString('base64url')
    await this.#store.insert(digest(id), now, role)
    const session = { csrfToken: csrfTokenOf(id, role), role, createdAt: now, lastSeenAt: now }
    this.#remember(digest(id), session)
    return { id, session }
  }

  /** The live session named by the request's cookie header, if any; marks it as seen now. */
  async find(cookieHeader: string | undefined): Promise<Session | undefined> {
    const now = this.#now()
    for (const id of cookieValues(cookieHeader, SESSION_COOKIE)) {
      const key = digest(id)
      let row: SessionRow | undefined
      try {
        row = await this.#store.find(key)
        if (row !== undefined && isExpired(row, now)) {
          this.#known.delete(key)
          await this.#store.delete(key)
          continue
        }
        if (row !== undefined && now - row.lastSeenAt >= TOUCH_EVERY_MS) await this.#store.touch(key, now)
      } catch (error) {
        const known = this.#known.get(key)
        if (known === undefined || isExpired(known, now)) throw error
        return { csrfToken: csrfTokenOf(id, known.role), ...known }
      }
      if (row === undefined) {
        this.#known.delete(key)
        continue
      }
      const session = {
        csrfToken: csrfTokenOf(id, row.role),
        role: row.role,
        createdAt: row.createdAt,
        lastSeenAt: Math.max(row.lastSeenAt, now),
      }
      this.#remember(key, session)
      return session
    }
    return undefined
  }

  #remember(key: string, session: Session): void {
    this.#known.delete(key)
    this.#known.set(key, { createdAt: session.createdAt, lastSeenAt: session.lastSeenAt, role: session.role })
    if (this.#known.size > MAX_SESSIONS) this.#known.delete(this.#known.keys().next().value!)
  }

  /** Ends the session named by the cookie header (sign-out), for every relay on the store. */
  async end(cookieHeader: string | undefined): Promise<void> {
    for (const id of cookieValues(cookieHeader, SESSION_COOKIE)) {
      this.#known.delete(digest(id))
      await this.#store.delete(digest(id))
    }
  }
}

/** Whether `sent` is the session's CSRF token, compared in constant time. */
export function isCsrfToken(session: Session, sent: string | null): boolean {
  return (
    sent !== null &&
    timingSafeEqual(createHash('sha256').update(session.csrfToken).digest(), createHash('sha256').update(sent).digest())
  )
}

// A read session's CSRF token starts with this, so that every view, which already carries the
// token into its forms and its header, lets the layout show the page without its actions. What a
// session may do is decided from the role the store keeps, never from this prefix.
const READ_ONLY_PREFIX = 'read.'

/** Whether the page showing `csrfToken` is a read session's: its actions are not offered. */
export function isReadOnlyPage(csrfToken: string): boolean {
  return csrfToken.startsWith(READ_ONLY_PREFIX)
}

function isExpired(session: Pick<SessionRow, 'createdAt' | 'lastSeenAt'>, now: number): boolean {
  return now - session.lastSeenAt > SESSION_IDLE_MS || now - session.createdAt > SESSION_MAX_MS
}

function csrfTokenOf(id: string, role: SessionRole): string {
  const token = createHmac('sha256', id).update('tracklet operator page: csrf').digest('base64url')
  return role === 'read' ? READ_ONLY_PREFIX + token : token
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
