import type { Notifications } from '../store/notifications/channel'
import type { SourceConfigStore } from '../store/source-configs'
import type { ResolvedRelayOptions } from '../config/options'
import { SecretBox } from '../config/secrets-key'
import { SourceRegistry } from './source-registry'
import { SourceSync } from './source-sync'

/** A relay's sources: the registry every area reads, the sync that keeps it, the key of their secrets. */
export interface OpenedSources {
  registry: SourceRegistry
  sync: SourceSync
  box: SecretBox
}

/**
 * The config file's sources and the admin API's (read from the store), in one registry kept up to
 * date as the store changes (docs/relay.md, "Two kinds of source").
 *
 * An API source whose secrets `secretsKey` cannot decrypt is left out, listed by the registry's
 * `unreadable()`.
 * @throws {RelayError} `ERR_RELAY_CONFIG` when a file source and an API source share a name.
 */
export async function openSources(
  options: ResolvedRelayOptions,
  store: SourceConfigStore,
  notifications: Notifications,
): Promise<OpenedSources> {
  const registry = new SourceRegistry(options.sources)
  const box = new SecretBox(options.secretsKey)
  const sync = new SourceSync({ store, registry, box, notifications })
  await sync.start()
  return { registry, sync, box }
}
