import { log } from '../../log'
import type { Notifications } from './channel'

/** What a {@link VersionFollower} follows, and how it says so in the log. */
export interface VersionFollowerOptions {
  /** The notification topic a change is announced on. */
  topic: string
  /** What is followed, for the log: `configuration`, `suppression`. */
  what: string
  /** The `event` of the log line of a failed read (`config-failed`). */
  failedEvent: string
  /** The store's version of what is followed now: one cheap read. */
  version: () => Promise<number>
  notifications: Notifications
  /** How often the version is read when no notification comes, ms. */
  pollMs: number
}

/**
 * Follows something the store keeps with a version (the API's sources, the suppressions): read at
 * start, then again whenever the version moves, told by a notification (PostgreSQL `LISTEN`, or
 * this relay's own change) or seen by the poll, the fallback when a notification is lost or cannot
 * come (SQLite `--workers` processes share no server). Reads run one at a time, in order. A
 * follower says what it reads in {@link read}.
 */
export abstract class VersionFollower {
  readonly #options: VersionFollowerOptions
  #applied: number | undefined
  #queue: Promise<void> = Promise.resolve()
  #timer: NodeJS.Timeout | undefined
  #unlisten: (() => Promise<void>) | undefined
  #stopped = false

  constructor(options: VersionFollowerOptions) {
    this.#options = options
  }

  /** Reads, then follows changes. Rejects when the first read fails. */
  async start(): Promise<void> {
    const { version, topic, notifications, pollMs, what } = this.#options
    await this.#apply(await version())
    this.#timer = setInterval(() => void this.refresh(), pollMs).unref()
    try {
      this.#unlisten = await notifications.listen(topic, () => void this.refresh())
    } catch (error) {
      // The poll still applies every change, a moment later.
      log.warn(`cannot listen for ${what} changes, polling for them: ${(error as Error).message}`, {
        event: 'notifications-lost',
      })
    }
  }

  /** Reads the version and, when it moved, the rest again. Failures are logged (the poll tries again). */
  refresh(): Promise<void> {
    this.#queue = this.#queue.then(async () => {
      if (this.#stopped) return
      try {
        const version = await this.#options.version()
        if (version !== this.#applied) await this.#apply(version)
      } catch (error) {
        log.error(`cannot read the ${this.#options.what} stored: ${(error as Error).message}`, {
          event: this.#options.failedEvent,
        })
      }
    })
    return this.#queue
  }

  /** This relay made a change: apply it here, then tell every other relay on the store. */
  async changed(): Promise<void> {
    await this.refresh()
    const { notifications, topic, what } = this.#options
    await notifications.notify(topic, String(this.#applied ?? 0)).catch((error: unknown) => {
      log.warn(`cannot announce a ${what} change (the others poll for it): ${(error as Error).message}`, {
        event: 'notifications-lost',
      })
    })
  }

  /** Stops following; waits for a read under way. */
  async stop(): Promise<void> {
    this.#stopped = true
    clearInterval(this.#timer)
    await this.#queue
    await this.#unlisten?.().catch(() => {})
  }

  /** Reads what is followed into memory (after the version: a change between the two is read again). */
  protected abstract read(): Promise<void>

  async #apply(version: number): Promise<void> {
    await this.read()
    this.#applied = version
  }
}
