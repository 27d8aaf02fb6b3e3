import { RelayError } from '../errors'
import { log, plural, redactFromLog } from '../log'
import type { AlertsOptions } from '../config/alerts-option'
import type { RelayOptions, RelaySource, ResolvedRelayOptions } from '../config/options'
import { logRefusedReload, logRestartNeeded, type ReloadChanges, reloadChanges } from './reload-plan'
import { secretsOf } from '../config/secrets'
import { validateRelayOptions } from '../config/validate'

/** Functions read and compiled for a reload, not yet in use: swapped in, or thrown away. */
export interface PreparedFunctions {
  /** Puts them in use (the next attempt of each delivery calls them) and closes the ones replaced. */
  commit(): void
  /** Closes them unused (the reload was refused after all). */
  discard(): Promise<void>
}

/**
 * What a reload changes in a running relay, each given by the area that owns it (so this module
 * imports none of them): the sources, the destinations' functions, where alerts go.
 */
export interface ReloadTargets {
  /** The registry every area looks sources up in: replaced whole (it may refuse, and then keeps its own). */
  sources: { replace(fileSources: readonly RelaySource[]): void }
  /** Delivery: reads and compiles the functions of `options`' sources (a function file is read again). */
  delivery: { prepareFunctions(options: ResolvedRelayOptions): Promise<PreparedFunctions> }
  /** Telemetry: sends the alerts from now on to `alerts` (none when undefined). */
  telemetry: { useAlerts(alerts: AlertsOptions | undefined): void }
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
      const functions = await this.#targets.delivery.prepareFunctions(next)
      try {
        this.#targets.sources.replace(next.sources)
      } catch (error) {
        await functions.discard()
        throw error
      }
      functions.commit()
      this.#targets.telemetry.useAlerts(next.alerts)
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
