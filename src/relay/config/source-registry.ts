import type { RelaySource } from './options'
import type { RoutedSource } from './sources'
import { trackingOf } from './plan-tracking'

/** A configured source as the relay holds it: its write key beside its routed view. */
export interface RegisteredSource {
  writeKey: string
  routed: RoutedSource
}

/**
 * The relay's sources, the one place every area looks them up: ingest by write key, the console
 * and the metrics by name. Its sources may be replaced while the relay runs (configuration through
 * the API, later); whoever must follow a change subscribes with {@link onChange}. See
 * docs/maintainers.md, "Seams".
 */
export class SourceRegistry {
  #sources: readonly RegisteredSource[]
  #listeners: readonly (() => void)[] = []

  constructor(sources: readonly RelaySource[]) {
    this.#sources = sources.map(registered)
  }

  /** The sources now, in the order configured. */
  all(): readonly RegisteredSource[] {
    return this.#sources
  }

  /** The routed view of each source now, in the order configured. */
  routed(): RoutedSource[] {
    return this.#sources.map((s) => s.routed)
  }

  /** Replaces every source (options already validated), then tells each listener. */
  replace(sources: readonly RelaySource[]): void {
    this.#sources = sources.map(registered)
    for (const listener of this.#listeners) listener()
  }

  /** Calls `listener` after each {@link replace}; the function returned unsubscribes it. */
  onChange(listener: () => void): () => void {
    this.#listeners = [...this.#listeners, listener]
    return () => {
      this.#listeners = this.#listeners.filter((l) => l !== listener)
    }
  }
}

function registered(source: RelaySource): RegisteredSource {
  return {
    writeKey: source.writeKey,
    routed: {
      name: source.name,
      destinations: Object.keys(source.destinations ?? {}),
      blockedEvents: new Set(source.schema?.blockedEvents),
      ...trackingOf(source.schema),
    },
  }
}
