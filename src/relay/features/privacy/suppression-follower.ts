import { log } from '../../log'
import type { Notifications } from '../../store/notifications/channel'
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
  readonly #deps: SuppressionFollowerDeps
  #set = new SuppressionSet()
  #applied: number | undefined
  #queue: Promise<void> = Promise.resolve()
  #timer: NodeJS.Timeout | undefined
  #unlisten: (() => Promise<void>) | undefined
  #stopped = false

  constructor(deps: SuppressionFollowerDeps) {
    this.#deps = deps
  }

  /** The suppressions now. */
  current(): SuppressionSet {
    return this.#set
  }

  /** Reads the suppressions, then follows their changes. Rejects when the first read fails. */
  async start(): Promise<void> {
    await this.#apply(await this.#deps.store.version())
    this.#timer = setInterval(() => void this.refresh(), this.#deps.pollMs ?? SUPPRESSIONS_POLL_MS).unref()
    try {
      this.#unlisten = await this.#deps.notifications.listen(SUPPRESSIONS_TOPIC, () => void this.refresh())
    } catch (error) {
      log.warn(`cannot listen for suppression changes, polling for them: ${(error as Error).message}`, {
        event: 'notifications-lost',
      })
    }
  }

  /** Reads the version and, when it moved, the suppressions again. Failures are logged (the poll tries again). */
  refresh(): Promise<void> {
    this.#queue = this.#queue.then(async () => {
      if (this.#stopped) return
      try {
        const version = await this.#deps.store.version()
        if (version !== this.#applied) await this.#apply(version)
      } catch (error) {
        log.error(`cannot read the suppressions stored: ${(error as Error).message}`, { event: 'suppressions-failed' })
      }
    })
    return this.#queue
  }

  /** This relay changed the suppressions: apply them here, then tell every other relay on the store. */
  async changed(): Promise<void> {
    await this.refresh()
    await this.#deps.notifications.notify(SUPPRESSIONS_TOPIC, String(this.#applied ?? 0)).catch((error: unknown) => {
      log.warn(`cannot announce a suppression change (the others poll for it): ${(error as Error).message}`, {
        event: 'notifications-lost',
      })
    })
  }

  async stop(): Promise<void> {
    this.#stopped = true
    clearInterval(this.#timer)
    await this.#queue
    await this.#unlisten?.().catch(() => {})
  }

  // The version is read before the list: a change between the two is read again at the next look.
  async #apply(version: number): Promise<void> {
    this.#set = new SuppressionSet(await this.#deps.store.list())
    this.#applied = version
  }
}
