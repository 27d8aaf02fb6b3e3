import { redactFromLog } from '../log'
import type { Notifications } from '../store/notifications/channel'
import { VersionFollower } from '../store/notifications/version-follower'
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
export class SourceSync extends VersionFollower {
  readonly #deps: SourceSyncDeps
  #forgetSecrets: () => void = () => {}

  /**
   * {@link start} reads the API sources into the registry (one it cannot decrypt left out and
   * listed as unreadable), then follows changes; it throws `ERR_RELAY_CONFIG` when an API source
   * has a file source's name.
   */
  constructor(deps: SourceSyncDeps) {
    super({
      topic: CONFIG_TOPIC,
      what: 'configuration',
      failedEvent: 'config-failed',
      version: () => deps.store.version(),
      notifications: deps.notifications,
      pollMs: deps.pollMs ?? CONFIG_POLL_MS,
    })
    this.#deps = deps
  }

  override async stop(): Promise<void> {
    await super.stop()
    this.#forgetSecrets()
  }

  protected override async read(): Promise<void> {
    const stored = await this.#deps.store.list()
    const { sources, unreadable } = decodeReadable(stored, this.#deps.box)
    this.#deps.registry.replaceStored(sources, unreadable)
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
