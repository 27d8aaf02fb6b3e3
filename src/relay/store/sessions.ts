/**
 * A signed-in browser of the operator page as the store keeps it: when it signed in and when it
 * was last seen, epoch ms on the relay's clock. Kept under the SHA-256 digest of the cookie's
 * token, never the token itself: a copy of the database signs no one in.
 */
export interface SessionRow {
  createdAt: number
  lastSeenAt: number
  /** Which token signed it in: the read token's session reads and changes nothing. */
  role: SessionRole
}

/** Which token signed a session in (`adminToken` or `readToken`). */
export type SessionRole = 'admin' | 'read'

/**
 * The operator page's sessions, in the relay's database, so that every relay and every worker of
 * `tracklet relay --workers N` on it knows a browser signed in through any of them, and a sign-out
 * through one ends the session for all. What counts as expired is the page's to judge (its
 * `Sessions`); the store only keeps, finds and deletes.
 */
export interface SessionStore {
  /** Keeps a new session under `digest`, signed in with `role`'s token, made and seen at `now`. */
  insert(digest: string, now: number, role: SessionRole): Promise<void>
  /** The session under `digest`, expired or not, or `undefined` when there is none. */
  find(digest: string): Promise<SessionRow | undefined>
  /** Marks the session under `digest` as seen at `now` (a later time only). */
  touch(digest: string, now: number): Promise<void>
  /** Deletes the session under `digest` (sign-out); none there is no error. */
  delete(digest: string): Promise<void>
  /**
   * Deletes the sessions last seen before `idleBefore` or made before `madeBefore`, and all but the
   * `keep` newest of the rest. Returns how many went.
   */
  sweep(idleBefore: number, madeBefore: number, keep: number): Promise<number>
}
