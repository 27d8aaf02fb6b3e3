import type { Suppression } from '../../store/suppressions'

/**
 * The suppressed users as ingest looks them up: one `Map` lookup per message, whatever the
 * number of suppressions (bench/suppressions.mjs measures 100,000). Built whole from the store's
 * list and replaced whole, so a lookup never sees half a change.
 */
export class SuppressionSet {
  /** Each suppressed user id: `true` for every source, else the sources it applies to. */
  readonly #users: ReadonlyMap<string, true | ReadonlySet<string>>

  constructor(suppressions: readonly Suppression[] = []) {
    const users = new Map<string, true | Set<string>>()
    for (const { userId, source } of suppressions) {
      const held = users.get(userId)
      if (source === undefined || held === true) users.set(userId, true)
      else if (held === undefined) users.set(userId, new Set([source]))
      else held.add(source)
    }
    this.#users = users
  }

  /** How many users are suppressed (for one source or every one). */
  get size(): number {
    return this.#users.size
  }

  /** Whether a message of `source` from `userId` is suppressed. */
  has(userId: unknown, source: string): boolean {
    if (this.#users.size === 0) return false
    // A userId is a string or a number on the wire; suppressions name it as text.
    const id = typeof userId === 'string' ? userId : typeof userId === 'number' ? String(userId) : undefined
    if (id === undefined) return false
    const held = this.#users.get(id)
    return held === true || held?.has(source) === true
  }
}
