import { log } from '../../log'

/** Hears each payload sent on a topic it listens to. */
export type NotificationListener = (payload: string) => void

/**
 * The relay's one database notification channel (docs/maintainers.md, "Seams"): what configuration
 * changes and the live view will share. On PostgreSQL a payload sent on a topic reaches every
 * relay on the database listening to it (`LISTEN`, on one connection per relay); on SQLite, whose
 * relays share no server, it reaches this relay's own listeners.
 */
export interface Notifications {
  /** Calls `listener` with each payload sent on `topic`; the function returned stops it. */
  listen(topic: string, listener: NotificationListener): Promise<() => Promise<void>>
  /** Sends `payload` to every listener of `topic`. */
  notify(topic: string, payload: string): Promise<void>
  /**
   * Sends each of `payloads` to every listener of `topic`, in order, in one round trip (the live
   * stream's batches). Each payload is under PostgreSQL's 8,000-byte limit: the caller splits.
   */
  notifyAll(topic: string, payloads: readonly string[]): Promise<void>
  /** Stops listening; what is sent afterwards is not heard. */
  close(): Promise<void>
}

/** The listeners of each topic, as both channels keep them. */
export class Topics {
  readonly #listeners = new Map<string, Set<NotificationListener>>()

  /** Adds `listener` to `topic`; whether it is the topic's first. */
  add(topic: string, listener: NotificationListener): boolean {
    const listeners = this.#listeners.get(topic)
    if (listeners === undefined) {
      this.#listeners.set(topic, new Set([listener]))
      return true
    }
    listeners.add(listener)
    return false
  }

  /** Removes `listener` from `topic`; whether the topic has none left. */
  remove(topic: string, listener: NotificationListener): boolean {
    const listeners = this.#listeners.get(topic)
    if (listeners === undefined) return false
    listeners.delete(listener)
    if (listeners.size > 0) return false
    this.#listeners.delete(topic)
    return true
  }

  names(): string[] {
    return [...this.#listeners.keys()]
  }

  /** Tells each listener of `topic` of `payload`; one that throws is logged, the others still hear it. */
  dispatch(topic: string, payload: string): void {
    for (const listener of this.#listeners.get(topic) ?? []) {
      try {
        listener(payload)
      } catch (error) {
        log.error(`a listener of the ${topic} notifications failed: ${(error as Error).stack ?? error}`, {
          event: 'internal-error',
        })
      }
    }
  }
}

/** The channel of a SQLite store: this relay's own listeners, in process. */
export class InProcessNotifications implements Notifications {
  readonly #topics = new Topics()
  #closed = false

  async listen(topic: string, listener: NotificationListener): Promise<() => Promise<void>> {
    this.#topics.add(topic, listener)
    return async () => {
      this.#topics.remove(topic, listener)
    }
  }

  async notify(topic: string, payload: string): Promise<void> {
    if (this.#closed) return
    // As PostgreSQL does: listeners hear it after the sender's turn, never inside notify().
    queueMicrotask(() => this.#topics.dispatch(topic, payload))
  }

  async notifyAll(topic: string, payloads: readonly string[]): Promise<void> {
    for (const payload of payloads) await this.notify(topic, payload)
  }

  async close(): Promise<void> {
    this.#closed = true
  }
}
