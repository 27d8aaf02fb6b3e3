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
export class SuppressionFollower extends VersionFollower {
  readonly #store: SuppressionStore
  #set = new SuppressionSet()

  constructor(deps: SuppressionFollowerDeps) {
    const { store, notifications } = deps
    super({
      topic: SUPPRESSIONS_TOPIC,
      what: 'suppression',
      failedEvent: 'suppressions-failed',
      version: () => store.version(),
      notifications,
      pollMs: deps.pollMs ?? SUPPRESSIONS_POLL_MS,
    })
    this.#store = store
  }

  /** The suppressions now. */
  current(): SuppressionSet {
    return this.#set
  }

  protected override async read(): Promise<void> {
    this.#set = new SuppressionSet(await this.#store.list())
  }
}
