import type { Notifications } from '../../store/notifications/channel'
import { VersionFollower } from '../../store/notifications/version-follower'
import type { SuppressionStore } from '../../store/suppressions'
import { SuppressionSet } from './suppression-set'

/** The notification topic a relay announces a change of the suppressions on. */
export const SUPPRESSIONS_TOPIC = 'tracklet_suppressions'

/**
 * How often each relay reads the suppressions' version, ms: the fallback that applies a change
 * within 5 s (docs/privacy.md) when a notification is lost, or cannot come (SQLite `--workers`
 * processes share no server). One indexed read of one row.
 */
export const SUPPRESSIONS_POLL_MS = 1000

/** What {@link SuppressionFollower} works with. */
export interface SuppressionFollowerDeps {
  store: SuppressionStore
  notifications: Notifications
  pollMs?: number
}

/**
 * Keeps this relay's {@link SuppressionSet} as the store has it: read at start, then again
 * whenever the store's version moves, told by a notification (PostgreSQL `LISTEN`, or this
 * relay's own change) or seen by the poll. Ingest reads {@link current} at each message.
 */
export class SuppressionFollower {
  #set = new SuppressionSet()
  readonly #follower: VersionFollower

  constructor(deps: SuppressionFollowerDeps) {
    const { store, notifications } = deps
    this.#follower = new VersionFollower({
      topic: SUPPRESSIONS_TOPIC,
      what: 'suppression',
      failedEvent: 'suppressions-failed',
      version: () => store.version(),
      // The version is read before the list: a change between the two is read again at the next look.
      apply: async () => {
        this.#set = new SuppressionSet(await store.list())
      },
      notifications,
      pollMs: deps.pollMs ?? SUPPRESSIONS_POLL_MS,
    })
  }

  /** The suppressions now. */
  current(): SuppressionSet {
    return this.#set
  }

  /** Reads the suppressions, then follows their changes. Rejects when the first read fails. */
  start(): Promise<void> {
    return this.#follower.start()
  }

  /** Reads the version and, when it moved, the suppressions again. Failures are logged (the poll tries again). */
  refresh(): Promise<void> {
    return this.#follower.refresh()
  }

  /** This relay changed the suppressions: apply them here, then tell every other relay on the store. */
  changed(): Promise<void> {
    return this.#follower.changed()
  }

  stop(): Promise<void> {
    return this.#follower.stop()
  }
}
