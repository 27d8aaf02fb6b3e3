import type { Client } from 'pg'
import { RELAY_DEFAULTS } from '../../config/defaults'
import { log } from '../../log'
import { type Connector, connectorFor } from '../../kit/postgres/connect'
import { loadDriver } from '../../kit/load-driver'
import { type NotificationListener, type Notifications, Topics } from './channel'

// After a lost connection, while topics are listened to, it is opened again after this wait,
// doubled at each failure up to the most: a listener must not stay deaf until someone sends.
const RECONNECT_FIRST_MS = 1000
const RECONNECT_MAX_MS = 30_000
// How its session is named in pg_stat_activity.
const NOTIFICATIONS_APPLICATION = 'tracklet-relay-notifications'

/**
 * The channel of a PostgreSQL store: `LISTEN` and `pg_notify` on one connection of this relay's
 * own, opened at the first use (a relay nobody listens on holds none). A connection lost is
 * opened again, listening to the same topics: at once when some are listened to, else at the next use.
 */
export class PostgresNotifications implements Notifications {
  readonly #url: string
  readonly #topics = new Topics()
  #client: Promise<Client> | undefined
  /** How its connection is made (kept: it remembers which host is the primary). */
  #connector: Connector | undefined
  /** The connection `#client` resolved to, once open. */
  #opened: Client | undefined
  #closed = false
  #reconnect: NodeJS.Timeout | undefined

  constructor(url: string) {
    this.#url = url
  }

  async listen(topic: string, listener: NotificationListener): Promise<() => Promise<void>> {
    const first = this.#topics.add(topic, listener)
    const client = await this.#connect()
    if (first) await client.query(`LISTEN ${client.escapeIdentifier(topic)}`)
    return async () => {
      if (!this.#topics.remove(topic, listener) || this.#client === undefined) return
      const current = await this.#client
      await current.query(`UNLISTEN ${current.escapeIdentifier(topic)}`)
    }
  }

  async notify(topic: string, payload: string): Promise<void> {
    const client = await this.#connect()
    await client.query('SELECT pg_notify($1, $2)', [topic, payload])
  }

  async notifyAll(topic: string, payloads: readonly string[]): Promise<void> {
    if (payloads.length === 0) return
    const client = await this.#connect()
    // One statement: its notifications are sent at its commit, in the array's order.
    await client.query('SELECT pg_notify($1, payload) FROM unnest($2::text[]) AS payload', [topic, payloads])
  }

  async close(): Promise<void> {
    this.#closed = true
    clearTimeout(this.#reconnect)
    const client = this.#client
    this.#client = undefined
    this.#opened = undefined
    // A connection that failed to open has nothing to end.
    const open = await client?.catch(() => undefined)
    await open?.end().catch(() => {})
  }

  #connect(): Promise<Client> {
    if (this.#closed) return Promise.reject(new Error('the notification channel is closed'))
    this.#client ??= this.#open().catch((error: unknown) => {
      this.#client = undefined
      throw error
    })
    return this.#client
  }

  // Listeners hear nothing while the connection is down: open it again, trying until it opens.
  #reopen(waitMs: number): void {
    if (this.#closed || this.#topics.names().length === 0 || this.#reconnect !== undefined) return
    this.#reconnect = setTimeout(() => {
      this.#reconnect = undefined
      if (this.#client !== undefined) return
      this.#connect().catch(() => this.#reopen(Math.min(RECONNECT_MAX_MS, waitMs * 2)))
    }, waitMs)
    this.#reconnect.unref()
  }

  async #open(): Promise<Client> {
    const pg = await loadDriver('pg', 'PostgreSQL', () => import('pg'))
    // CommonJS seen from ESM: the classes are on the default export.
    const driver = ((pg as unknown as { default?: typeof pg }).default ?? pg) as typeof pg
    // Several hosts: the connection goes to the one that accepts writes, as the pool's do.
    this.#connector ??= connectorFor(driver, this.#url, RELAY_DEFAULTS.storeTimeout)
    const { Client, connectionString } = this.#connector
    const client = new Client({ connectionString, application_name: NOTIFICATIONS_APPLICATION })
    client.on('notification', (message) => this.#topics.dispatch(message.channel, message.payload ?? ''))
    let lost = false
    client.on('error', (error) => {
      // One cut can be told twice (the server's FATAL, then the socket's end): once is enough.
      if (lost) return
      lost = true
      // Never the URL (it may hold the password): the driver's message names the failure only.
      log.warn(`the notification connection failed, opened again at its next use: ${error.message}`, {
        event: 'notifications-lost',
      })
      // Only this connection's place: a newer one may hold it already.
      if (this.#opened === client) {
        this.#client = undefined
        this.#opened = undefined
      }
      void client.end().catch(() => {})
      this.#reopen(RECONNECT_FIRST_MS)
    })
    await client.connect()
    for (const topic of this.#topics.names()) await client.query(`LISTEN ${client.escapeIdentifier(topic)}`)
    if (lost) throw new Error('the notification connection was lost as it opened')
    this.#opened = client
    return client
  }
}
