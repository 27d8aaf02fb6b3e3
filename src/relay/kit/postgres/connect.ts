import type pg from 'pg'
import type { Client, ClientConfig } from 'pg'
import { type DatabaseHost, parseDatabaseHosts, type TargetSessionAttrs } from './hosts'
import { PrimaryFinder } from './primary-finder'

// pg's callback form of `connect()`, which pg-pool uses.
type Connected = (error: Error | null, client?: Client) => void

/** How the relay's connections to one `database` are made: a `pg` client class and its URL. */
export interface Connector {
  /** `pg`'s own `Client`, or one that connects to the host the URL's attributes accept. */
  Client: typeof Client
  /** The URL to give that class (`connectionString`). */
  connectionString: string
}

// What a probe and a new connection ask a host, in one round trip.
const SESSION_CHECK = "SELECT pg_is_in_recovery() AS recovery, current_setting('transaction_read_only') AS read_only"

/**
 * The connector for `url`. A one-host URL without `target_session_attrs` gets `pg`'s `Client` and
 * the URL unchanged. Otherwise the class connects to the first host, in the URL's order, that is
 * up and accepts what `target_session_attrs` asks, checked again on each new connection: every
 * pool and the `LISTEN` connection follow the primary through a failover. A host that fails a
 * connection is searched for again at the next one.
 *
 * @param timeoutMs how long a probe of one host may take (connecting and its check).
 * @throws {TypeError} when the URL's hosts or `target_session_attrs` cannot be used.
 */
export function connectorFor(driver: typeof pg, url: string, timeoutMs: number): Connector {
  const parsed = parseDatabaseHosts(url)
  if (!parsed.followsPrimary) return { Client: driver.Client, connectionString: url }
  const attrs = parsed.targetSessionAttrs
  const finder = new PrimaryFinder(parsed.hosts, async (host) => {
    const probe = new driver.Client({
      connectionString: parsed.urlFor(host),
      connectionTimeoutMillis: timeoutMs,
      query_timeout: timeoutMs,
      application_name: 'tracklet-relay-probe',
    })
    // Its failures reject the calls below; a cut after them is of no interest.
    probe.on('error', () => {})
    try {
      await probe.connect()
      await checkSession(probe, attrs)
    } finally {
      await probe.end().catch(() => {})
    }
  })

  class PrimaryClient extends driver.Client {
    constructor(config?: string | ClientConfig) {
      super(config)
      // A connection to a primary that dies (a failover) hears its server's last words, "terminating
      // connection due to unexpected postmaster exit", at any point of its life: while it is
      // opened, checked out, refused and being ended. An 'error' event nobody listens to is an
      // uncaught exception that ends the relay. The calls using the connection fail with the same
      // error and answer for it (a 503, a claim tried again), and its owners (the pool, the
      // notification channel) listen too: this one only keeps the process alive.
      this.on('error', () => {})
    }

    override connect(): Promise<Client>
    override connect(callback: Connected): void
    override connect(callback?: Connected): Promise<Client> | undefined {
      const connected = this.#connectToPrimary()
      if (callback === undefined) return connected
      connected.then(
        (client) => callback(null, client),
        (error: Error) => callback(error),
      )
      return undefined
    }

    async #connectToPrimary(): Promise<Client> {
      const host: DatabaseHost = await finder.find()
      this.host = host.host
      this.port = host.port
      try {
        await super.connect()
        await checkSession(this, attrs)
        return this
      } catch (error) {
        // Down, or no longer the primary (a standby now, after a failover elsewhere).
        finder.lost(host)
        // Not awaited: a connection that never opened may end only when its socket closes.
        void this.end().catch(() => {})
        throw error
      }
    }
  }
  return { Client: PrimaryClient, connectionString: parsed.urlFor(parsed.hosts[0]!) }
}

/** Resolves when `client`'s session is one `attrs` accepts; rejects saying why not. */
async function checkSession(client: Client, attrs: TargetSessionAttrs): Promise<void> {
  if (attrs === 'any') return
  const { rows } = await client.query<{ recovery: boolean; read_only: string }>(SESSION_CHECK)
  const session = rows[0]
  if (attrs === 'primary' && session?.recovery !== false) {
    throw new Error('it is in recovery (a standby)')
  }
  if (attrs === 'read-write' && session?.read_only !== 'off') {
    const why = session?.recovery ? 'a standby' : 'default_transaction_read_only'
    throw new Error(`it is read-only (${why})`)
  }
}
