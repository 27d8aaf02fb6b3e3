import { RelayError } from '../errors'
import type { RelaySource, SourceDestinations, SourceSchema } from '../config/options'
import type { RoutedSource } from '../config/sources'
import { writeKeyDigest } from '../kit/write-key-digest'
import { trackingOf } from '../config/plan-tracking'
import { isOrdered } from '../destinations/ordered-setting'

/**
 * A source created through the admin API, decoded from the store: its settings with secrets in
 * clear (held in memory only) and the digests of its live write keys.
 */
export interface ApiSource {
  name: string
  enabled: boolean
  destinations: SourceDestinations
  schema: SourceSchema
  /** SHA-256 (hex) of each live write key. */
  writeKeyDigests: readonly string[]
  /** Its revision in the store (its ETag). */
  revision: number
}

/**
 * An API source the relay cannot use: its stored secrets do not open with `secretsKey`. It is left
 * out (its write keys answer 401) while every other source is served; `/healthz` and the page name it.
 */
export interface UnreadableSource {
  name: string
  /** Why, for the log and whoever holds the admin token: never a secret. */
  error: string
}

/** Told after each change of the sources; a promise returned says when it is done with it. */
export type SourcesListener = () => void | Promise<void>

/** A source as the relay holds it: where it comes from, its key digests and its routed view. */
export interface RegisteredSource {
  /** From the config file (read-only through the admin API), or created through it. */
  provisioned: boolean
  /** SHA-256 (hex) of each write key it accepts: ingest looks keys up by digest, in memory. */
  writeKeyDigests: readonly string[]
  /** Its settings as a {@link RelaySource} (an API source's `writeKey` is empty: it has digests only). */
  settings: RelaySource
  /** Ingest refuses its messages (403 `ERR_SOURCE_DISABLED`); deliveries accepted go on. */
  enabled: boolean
  /** An API source's revision in the store; `undefined` for the file's. */
  revision: number | undefined
  /**
   * A file source's: when this relay loaded its write key (ms since the epoch), listed as the key's
   * `createdAt`; kept across reloads while the key stays the same. `undefined` for an API source.
   */
  keyLoadedAt?: number
  routed: RoutedSource
}

/**
 * The relay's sources, the one place every area looks them up: ingest by write key digest, the
 * console, delivery and the metrics by name. Two kinds (docs/relay.md, "Two kinds of source"): the
 * config file's ({@link replace}, at start and on a reload) and those created through the admin
 * API ({@link replaceStored}, as the store says). A name is unique across both. Whoever must follow
 * a change subscribes with {@link onChange}. See docs/maintainers.md, "Seams".
 */
export class SourceRegistry {
  #file: readonly RegisteredSource[]
  #stored: readonly RegisteredSource[] = []
  // The API sources left out of #stored because they cannot be read.
  #unreadable: readonly UnreadableSource[] = []
  #sources: readonly RegisteredSource[]
  #listeners: readonly SourcesListener[] = []
  // What the listeners of the last change still do (compiling a function), for settled().
  #settling: Promise<void> = Promise.resolve()
  // One array kept up to date in place, for the readers that hold on to a list of routed sources.
  readonly #live: RoutedSource[] = []

  constructor(fileSources: readonly RelaySource[]) {
    this.#file = fileSources.map((source) => fromFile(source, []))
    this.#sources = this.#file
    this.#live.push(...this.routed())
  }

  /** The sources now: the file's, in its order, then the API's, by name. */
  all(): readonly RegisteredSource[] {
    return this.#sources
  }

  /** The source named `name` now, if any. */
  find(name: string): RegisteredSource | undefined {
    return this.#sources.find((s) => s.routed.name === name)
  }

  /** The routed view of each source now, in the order of {@link all}. */
  routed(): RoutedSource[] {
    return this.#sources.map((s) => s.routed)
  }

  /** The routed view of each source, in one array this registry updates in place at each change. */
  live(): readonly RoutedSource[] {
    return this.#live
  }

  /**
   * Replaces the config file's sources (options already validated), then tells each listener.
   * @throws {RelayError} `ERR_RELAY_CONFIG` naming both when a file source has an API source's name;
   * nothing changes then.
   */
  replace(fileSources: readonly RelaySource[]): void {
    const file = fileSources.map((source) => fromFile(source, this.#file))
    refuseClash(file, this.#stored)
    this.#file = file
    this.#changed()
  }

  /**
   * Replaces the sources created through the admin API (as the store lists them), and the list of
   * those that could not be read (`unreadable`, not served).
   * @throws {RelayError} `ERR_RELAY_CONFIG` naming both when one has a file source's name; nothing
   * changes then.
   */
  replaceStored(sources: readonly ApiSource[], unreadable: readonly UnreadableSource[] = []): void {
    const stored = sources.map(fromApi)
    refuseClash(this.#file, stored)
    this.#stored = stored
    this.#unreadable = Object.freeze([...unreadable])
    this.#changed()
  }

  /** The API sources left out at the last {@link replaceStored}: they could not be read. */
  unreadable(): readonly UnreadableSource[] {
    return this.#unreadable
  }

  /**
   * Calls `listener` after each change of the sources; the function returned unsubscribes it. A
   * listener that has more to do returns a promise of it (which must not reject): see {@link settled}.
   */
  onChange(listener: SourcesListener): () => void {
    this.#listeners = [...this.#listeners, listener]
    return () => {
      this.#listeners = this.#listeners.filter((l) => l !== listener)
    }
  }

  /** Resolves once the listeners of the last change have done what they returned a promise of. */
  settled(): Promise<void> {
    return this.#settling
  }

  #changed(): void {
    this.#sources = [...this.#file, ...this.#stored]
    this.#live.splice(0, this.#live.length, ...this.routed())
    const pending = this.#listeners.map((listener) => listener())
    this.#settling = Promise.all(pending).then(() => undefined)
  }
}

function refuseClash(file: readonly RegisteredSource[], stored: readonly RegisteredSource[]): void {
  for (const source of stored) {
    const index = file.findIndex((f) => f.routed.name === source.routed.name)
    if (index === -1) continue
    throw new RelayError(
      'ERR_RELAY_CONFIG',
      `the config file's sources[${index}] and the source created through the admin API are both named ${JSON.stringify(source.routed.name)}: rename or delete one of them (a name is unique across both kinds, docs/relay.md)`,
    )
  }
}

function fromFile(source: RelaySource, before: readonly RegisteredSource[]): RegisteredSource {
  const digest = writeKeyDigest(source.writeKey)
  const same = before.find((b) => b.settings.name === source.name && b.writeKeyDigests[0] === digest)
  return {
    provisioned: true,
    writeKeyDigests: [digest],
    settings: source,
    enabled: true,
    revision: undefined,
    keyLoadedAt: same?.keyLoadedAt ?? Date.now(),
    routed: routedOf(source),
  }
}

function fromApi(source: ApiSource): RegisteredSource {
  const settings = { name: source.name, writeKey: '', destinations: source.destinations, schema: source.schema }
  return {
    provisioned: false,
    writeKeyDigests: source.writeKeyDigests,
    settings,
    enabled: source.enabled,
    revision: source.revision,
    routed: { ...routedOf(settings), ...(source.enabled ? {} : { disabled: true }) },
  }
}

function routedOf(source: RelaySource): RoutedSource {
  const destinations = Object.entries(source.destinations ?? {})
  const ordered = destinations.filter(([, settings]) => isOrdered(settings)).map(([name]) => name)
  return {
    name: source.name,
    destinations: destinations.map(([name]) => name),
    blockedEvents: new Set(source.schema?.blockedEvents),
    ...trackingOf(source.schema),
    ...(ordered.length > 0 ? { ordered: new Set(ordered) } : {}),
  }
}
