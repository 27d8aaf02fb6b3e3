import { RelayError } from '../../errors'
import { type DatabaseHost, hostName } from './hosts'

/**
 * The code of the error a connection fails with while no host of a several-host `database`
 * accepts what `target_session_attrs` asks (during a failover: the primary is lost and no standby
 * is promoted yet). Ingest answers 503 and `/healthz` says so.
 */
export const NO_PRIMARY_CODE = 'ERR_RELAY_NO_PRIMARY'

/** The start of that error's message, which `/healthz` looks for. */
export const NO_PRIMARY_MESSAGE = 'no database host accepts writes'

/**
 * Checks one host: resolves when it accepts a session the relay can use, rejects with why not
 * (unreachable, in recovery, read-only).
 */
export type HostProbe = (host: DatabaseHost) => Promise<void>

/**
 * Which of a database's hosts to connect to: the first, in the URL's order, that its probe
 * accepts, remembered until a connection to it fails or finds it changed ({@link lost}). Searches
 * that overlap share one round of probes.
 */
export class PrimaryFinder {
  readonly #hosts: readonly DatabaseHost[]
  readonly #probe: HostProbe
  /** The host found last, while no connection to it has failed since. */
  #current: DatabaseHost | undefined
  /** The search under way, shared by whoever asks meanwhile. */
  #searching: Promise<DatabaseHost> | undefined

  constructor(hosts: readonly DatabaseHost[], probe: HostProbe) {
    this.#hosts = hosts
    this.#probe = probe
  }

  /**
   * The host to connect to.
   *
   * @throws {RelayError} {@link NO_PRIMARY_CODE} when no host is accepted, with each one's reason.
   */
  find(): Promise<DatabaseHost> {
    if (this.#current !== undefined) return Promise.resolve(this.#current)
    this.#searching ??= this.#search().finally(() => {
      this.#searching = undefined
    })
    return this.#searching
  }

  /** A connection to `host` failed, or found it no longer takes writes: search again next time. */
  lost(host: DatabaseHost): void {
    if (this.#current === host) this.#current = undefined
  }

  async #search(): Promise<DatabaseHost> {
    const reasons: string[] = []
    for (const host of this.#hosts) {
      try {
        await this.#probe(host)
        this.#current = host
        return host
      } catch (error) {
        const reason = error instanceof Error ? error.message || error.name : String(error)
        reasons.push(`${hostName(host)}: ${reason}`)
      }
    }
    throw new RelayError(NO_PRIMARY_CODE, `${NO_PRIMARY_MESSAGE} (${reasons.join('; ')})`)
  }
}
