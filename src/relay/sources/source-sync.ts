import { log, redactFromLog } from '../log'
import type { Notifications } from '../store/notifications/channel'
import type { SourceConfigStore } from '../store/source-configs'
import { decodeReadable } from './readable-sources'
import type { SecretBox } from '../config/secrets-key'
import type { ApiSource, SourceRegistry } from './source-registry'
import { mapSecrets } from './source-secrets'

/** The notification topic a relay announces a configuration change on. */
export const CONFIG_TOPIC = 'tracklet_config'

/**
 * How often each relay reads the configuration version, ms: the fallback that makes every relay
 * on the store apply a change within 5 s (docs/relay.md) when a notification is lost (a cut
 * `LISTEN` connection) or cannot reach it (SQLite `--workers` processes share no server).
 */
export const CONFIG_POLL_MS = 1000

/** What {@link SourceSync} works with. */
export interface SourceSyncDeps {
  store: SourceConfigStore
  registry: SourceRegistry
  box: SecretBox
  notifications: Notifications
  pollMs?: number
}

/**
 * Keeps the registry's API sources as the store has them: read at start, then again whenever the
 * store's configuration version moves, told by a notification (PostgreSQL `LISTEN`, or this
 * relay's own changes) or seen by the poll.
 */
export class SourceSync {
  readonly #deps: SourceSyncDeps
  #applied: number | undefined
  #queue: Promise<void> = Promise.resolve()
  #timer: NodeJS.Timeout | undefined
  #unlisten: (() => Promise<void>) | undefined
  #forgetSecrets: () => void = () => {}
  #stopped = false

  constructor(deps: SourceSyncDeps) {
    this.#deps = deps
  }

  /**
   * Reads the API sources into the registry (one it cannot decrypt left out and listed as
   * unreadable), then follows changes.
   * @throws {RelayError} `ERR_RELAY_CONFIG` when an API source has a file source's name.
   */
  async start(): Promise<void> {
    await this.#apply(await this.#deps.store.version())
    this.#timer = setInterval(() => void this.refresh(), this.#deps.pollMs ?? CONFIG_POLL_MS).unref()
    try {
      this.#unlisten = await this.#deps.notifications.listen(CONFIG_TOPIC, () => void this.refresh())
    } catch (error) {
      // The poll still applies every change, a second later.
      log.warn(`cannot listen for configuration changes, polling for them: ${(error as Error).message}`, {
        event: 'notifications-lost',
      })
    }
  }

  /** Reads the store's version and, when it moved, the sources again. Failures are logged (the next poll tries again). */
  refresh(): Promise<void> {
    this.#queue = this.#queue.then(async () => {
      if (this.#stopped) return
      try {
        const version = await this.#deps.store.version()
        if (version !== this.#applied) await this.#apply(version)
      } catch (error) {
        log.error(`cannot apply the configuration stored: ${(error as Error).message}`, { event: 'config-failed' })
      }
    })
    return this.#queue
  }

  /** This relay changed the configuration: apply it here, and tell every other relay on the store. */
  async changed(): Promise<void> {
    await this.refresh()
    await this.#deps.notifications.notify(CONFIG_TOPIC, String(this.#applied ?? 0)).catch((error: unknown) => {
      log.warn(`cannot announce a configuration change (the others poll for it): ${(error as Error).message}`, {
        event: 'notifications-lost',
      })
    })
  }

  async stop(): Promise<void> {
    this.#stopped = true
    clearInterval(this.#timer)
    await this.#queue
    await this.#unlisten?.().catch(() => {})
    this.#forgetSecrets()
  }

  async #apply(version: number): Promise<void> {
    const stored = await this.#deps.store.list()
    const { sources, unreadable } = decodeReadable(stored, this.#deps.box)
    this.#deps.registry.replaceStored(sources, unreadable)
    this.#applied = version
    // The API sources' secrets are kept out of the log as the file's are.
    const forget = this.#forgetSecrets
    this.#forgetSecrets = redactFromLog(secretsOf(sources))
    forget()
  }
}

function secretsOf(sources: readonly ApiSource[]): string[] {
  const found: string[] = []
  for (const source of sources) {
    mapSecrets(source.destinations, (value) => {
      found.push(value)
      return value
    })
  }
  return found
}
