import type { RelayOptions } from './config/options'
import type { ReloadChanges } from './sources/reload-plan'

/** A running relay. */
export interface Relay {
  /** The base URL it listens on, such as `http://127.0.0.1:8787`. */
  readonly url: string
  /**
   * Applies new options to the running relay, as `tracklet relay` does with its config file on
   * `SIGHUP` (docs/relay.md, "Reloading the config file"): `sources` and `alerts` are applied whole
   * (sources added, changed and removed; each destination's `function.file` read again); any
   * other option that differs from the running one is logged at `warn` as needing a restart, and
   * not applied. Reloads run one at a time, in the order called.
   *
   * @returns what changed: the sources added, changed and removed by name, whether `alerts` did,
   * and the options that need a restart.
   * @throws {RelayConfigError} (`ERR_RELAY_CONFIG`) listing every problem of invalid options
   * (each also logged at `error`); or the error of a part that refused the new config (a function
   * that does not compile, a source name the admin API already uses). Nothing changes then: the
   * running config stays.
   * @throws {RelayError} (`ERR_RELAY_CLOSED`) once {@link close} was called.
   */
  reload(options: RelayOptions): Promise<ReloadChanges>
  /**
   * Stops the relay: no new requests are accepted, deliveries in flight get a moment to finish
   * (those that do not are attempted again at the next start), then the database is closed.
   * Idempotent.
   */
  close(): Promise<void>
}
