import { RelayError } from '../errors'
import { log, plural, redactFromLog } from '../log'
import type { RelayOptions, RelaySource, ResolvedRelayOptions } from '../config/options'
import { logRefusedReload, logRestartNeeded, type ReloadChanges, reloadChanges } from './reload-plan'
import { secretsOf } from '../config/secrets'
import { validateRelayOptions } from '../config/validate'

/** A part of a reload prepared, not yet in use: put in use, or thrown away. */
export interface PreparedReload {
  /** Puts it in use (functions: the next attempt of each delivery calls them; the old ones close). */
  commit(): void
  /** Throws it away unused (the reload was refused after all). */
  discard(): Promise<void>
}

/** Functions read and compiled for a reload, not yet in use. */
export type PreparedFunctions = PreparedReload

/**
 * A part of the running relay that a reload changes (the destinations' functions, where alerts
 * go): it reads what it needs of the new options and prepares it, not yet in use; once every part
 * is prepared and the sources replaced, each is committed (or, when one refused, discarded).
 */
export interface ReloadPart {
  /** @throws {RelayConfigError} (or the part's own error) to refuse the reload: nothing changes. */
  prepare(options: ResolvedRelayOptions): Promise<PreparedReload>
}

/**
 * What a reload changes in a running relay, each given by what owns it (so this module imports
 * none of them): the sources, and the parts the areas and features give.
 */
export interface ReloadTargets {
  /** The registry every area looks sources up in: replaced whole (it may refuse, and then keeps its own). */
  sources: { replace(fileSources: readonly RelaySource[]): void }
  /** The other parts, prepared in this order, committed once all are and the sources replaced. */
  parts: readonly ReloadPart[]
  /** The restart-needed warning was logged already (by the primary of `--workers`, once for all). */
  warningsLogged: boolean
  /**
   * Told once a reload is applied: the one place where the audit log's `config.reloaded` entry
   * (actor `file`) is written. A failure here is logged; the reload stays applied.
   */
  onReloaded?: ((changes: ReloadChanges) => void | Promise<void>) | undefined
}

/**
 * Applies a new config file to a running relay (docs/relay.md, "Reloading the config file"): the
 * sources and `alerts`, whole or not at all. Reloads run one after the other, in the order asked.
 */
export class ConfigReloader {
  #current: ResolvedRelayOptions
  readonly #targets: ReloadTargets
  #queue: Promise<unknown> = Promise.resolve()
  // The secrets of the config applied by the last reload, cleaned from the log while it runs.
  #releaseSecrets: () => void = () => {}
  #stopped = false

  constructor(current: ResolvedRelayOptions, targets: ReloadTargets) {
    this.#current = current
    this.#targets = targets
  }

  /**
   * Validates `options` as createRelay does and applies its sources and `alerts`; each other
   * option that changed is logged at `warn` as needing a restart, and not applied.
   *
   * @throws {RelayConfigError} (`ERR_RELAY_CONFIG`) listing every problem, each logged at `error`;
   * or the error of the part that refused it (a function that does not compile, a source name
   * taken by a source of the admin API): nothing is changed then.
   */
  reload(options: RelayOptions): Promise<ReloadChanges> {
    const next = this.#queue.then(() => this.#apply(options))
    this.#queue = next.catch(() => {})
    return next
  }

  /**
   * The relay is closing: a reload asked from now on is refused (`ERR_RELAY_CLOSED`); resolves once
   * the one under way, if any, has ended (before the areas it changes stop).
   */
  async stop(): Promise<void> {
    this.#stopped = true
    await this.#queue
  }

  /** Stops cleaning the log of the secrets of the last config reloaded (the relay closed). */
  forgetSecrets(): void {
    this.#releaseSecrets()
  }

  async #apply(options: RelayOptions): Promise<ReloadChanges> {
    const current = this.#current
    // Its secrets are cleaned from the log before anything about it is logged.
    let releaseSecrets: () => void = () => {}
    try {
      if (this.#stopped) throw new RelayError('ERR_RELAY_CLOSED', 'the relay is closed: there is nothing to reload')
      const given = validateRelayOptions(options)
      const next: ResolvedRelayOptions = { ...current, sources: given.sources, alerts: given.alerts }
      releaseSecrets = redactFromLog(secretsOf(given))
      const changes = reloadChanges(current, given)
      const prepared = await prepareAll(this.#targets.parts, next)
      try {
        this.#targets.sources.replace(next.sources)
      } catch (error) {
        await discardAll(prepared)
        throw error
      }
      for (const part of prepared) part.commit()
      this.#current = next
      this.#releaseSecrets()
      this.#releaseSecrets = releaseSecrets
      if (!this.#targets.warningsLogged) logRestartNeeded(changes.restartNeeded)
      logApplied(changes)
      await this.#told(changes)
      return changes
    } catch (error) {
      logRefusedReload(error)
      releaseSecrets()
      throw error
    }
  }

  async #told(changes: ReloadChanges): Promise<void> {
    try {
      await this.#targets.onReloaded?.(changes)
    } catch (error) {
      log.error(`config reloaded, but recording it failed: ${(error as Error).message}`, { event: 'internal-error' })
    }
  }
}

// Each part prepared in order; when one refuses, the ones prepared before it are thrown away.
async function prepareAll(parts: readonly ReloadPart[], options: ResolvedRelayOptions): Promise<PreparedReload[]> {
  const prepared: PreparedReload[] = []
  try {
    for (const part of parts) prepared.push(await part.prepare(options))
  } catch (error) {
    await discardAll(prepared)
    throw error
  }
  return prepared
}

async function discardAll(prepared: readonly PreparedReload[]): Promise<void> {
  for (const part of prepared.toReversed()) await part.discard().catch(() => undefined)
}

function logApplied({ added, changed, removed, alerts }: ReloadChanges): void {
  const parts = [
    ...(added.length > 0 ? [`${plural(added.length, 'source')} added (${added.join(', ')})`] : []),
    ...(changed.length > 0 ? [`${plural(changed.length, 'source')} changed (${changed.join(', ')})`] : []),
    ...(removed.length > 0 ? [`${plural(removed.length, 'source')} removed (${removed.join(', ')})`] : []),
    ...(alerts ? ['alerts changed'] : []),
  ]
  log.info(`config reloaded: ${parts.length > 0 ? parts.join(', ') : 'no source or alerts change'}`, {
    event: 'config-reloaded',
  })
}
