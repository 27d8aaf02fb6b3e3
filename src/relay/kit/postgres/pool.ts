import type { Pool, PoolClient, QueryConfig, QueryResult } from 'pg'
import { RelayError } from '../../errors'
import { DEFAULT_STORE_TIMEOUT_MS } from '../store-timeout'
import { log } from '../../log'
import { loadDriver } from '../load-driver'
import { connectorFor } from './connect'
import { hostName, parseDatabaseHosts } from './hosts'

/** The relay's connections to PostgreSQL (a `pg` pool), shared by the modules of this store. */
export type PostgresPool = Pool

/** Loads the `pg` module (injectable, so a missing driver can be tested). */
export type PgLoader = () => Promise<typeof import('pg')>

/** How the relay connects to PostgreSQL. */
export interface PoolSettings {
  /**
   * Connections per relay: ingest commits, the worker's claims and outcome writes, and the admin
   * API share them; a relay rarely needs more than a few at once, and many relays share the
   * server's `max_connections`.
   */
  max: number
  /**
   * The longest one store call waits for the database, ms (the relay's `storeTimeout`): for a
   * connection and its statement together. A server that is frozen or out of reach fails the call
   * after this long instead of holding it.
   */
  storeTimeout: number
}

export const DEFAULT_POOL_SETTINGS: PoolSettings = Object.freeze({
  max: 10,
  storeTimeout: DEFAULT_STORE_TIMEOUT_MS,
})

// int8 (bigint): ids, epoch-ms times and counts. Every value the relay stores fits a JS number
// exactly (ids and times are far below 2^53), so they are read as numbers, not strings.
const INT8_OID = 20

// What pg's own client-side timer rejects a query with (its query_timeout).
const READ_TIMEOUT_MESSAGE = 'Query read timeout'

/**
 * Opens a pool of connections to the PostgreSQL database at `url`, loading `pg` only now (an
 * optional peer dependency). Connections are made on demand: this does not touch the network.
 * A connection that breaks while idle (the server restarted, the network dropped) is dropped
 * from the pool and logged, never an uncaught error; the next query opens a new one.
 *
 * Every call is bounded by `settings.storeTimeout` (see {@link boundQueries}): a server that is
 * down, out of reach or frozen (it accepts TCP but never answers) fails the call after that long.
 *
 * @throws {RelayError} `ERR_RELAY_DRIVER_MISSING` when `pg` is not installed.
 */
export async function openPool(
  url: string,
  settings: PoolSettings = DEFAULT_POOL_SETTINGS,
  load: PgLoader = () => import('pg'),
): Promise<PostgresPool> {
  const pg = await loadDriver('pg', 'PostgreSQL', load)
  // CommonJS seen from ESM: the classes are on the default export.
  const driver = ((pg as unknown as { default?: typeof pg }).default ?? pg) as typeof pg
  const parseDefault = driver.types.getTypeParser
  // Several hosts (or a target_session_attrs): connections go to the one that accepts writes.
  const { Client, connectionString } = connectorFor(driver, url, settings.storeTimeout)
  const pool = new driver.Pool({
    Client: Client as unknown as new () => import('pg').ClientBase,
    connectionString,
    max: settings.max,
    // Waiting for a connection: a free one from the pool, or a new one (whose start-up a frozen
    // server never answers, though its kernel accepts the TCP connection).
    connectionTimeoutMillis: settings.storeTimeout,
    // The server's own limit: a live server cancels a statement that waits too long (on a lock,
    // say) and answers with an error, the connection staying usable. A frozen server cannot, so
    // the client-side timer below (query_timeout) ends the wait too.
    statement_timeout: settings.storeTimeout,
    query_timeout: settings.storeTimeout,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    application_name: 'tracklet-relay',
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID ? Number : parseDefault(oid, format as 'text')) as typeof parseDefault,
    },
  })
  const where = describeDatabase(url)
  pool.on('error', (error) => {
    log.warn(`PostgreSQL connection to ${where} lost while idle: ${redact(error.message, url)}`, {
      event: 'connection-lost',
    })
  })
  pool.on('connect', (client) => {
    // pg-pool listens for a client's 'error' only while it is idle. Checked out (a transaction, a
    // session lock, a bounded query), a connection cut by the network or ended by the server
    // (pg_terminate_backend, a failover) emits 'error' with nobody listening: an uncaught
    // exception that ends the process. The call using the client fails with the same error and
    // answers for it (a 503, a retried claim); a client that lost its connection leaves the pool
    // at its release.
    client.on('error', ignoreError)
    endOnReadTimeout(client)
  })
  boundQueries(pool, settings.storeTimeout)
  return pool
}

/**
 * Makes `pool.query` (the one-statement calls) wait at most `timeout` ms in all, the wait for a
 * connection included: the statement gets what the wait for a connection left of it, so a call
 * that waited long for a busy pool does not then wait a whole `timeout` more. A connection whose
 * statement failed is discarded, not returned to the pool.
 */
function boundQueries(pool: PostgresPool, timeout: number): void {
  const bounded = async (textOrConfig: string | QueryConfig, values?: unknown[]): Promise<QueryResult> => {
    const deadline = performance.now() + timeout
    const client = await pool.connect()
    const config: QueryConfig = typeof textOrConfig === 'string' ? { text: textOrConfig } : { ...textOrConfig }
    if (values !== undefined) config.values = values
    // pg reads query_timeout from a query's config as well as from the pool's settings.
    const left = Math.max(1, Math.ceil(deadline - performance.now()))
    try {
      const result = await client.query({ ...config, query_timeout: left } as QueryConfig)
      client.release()
      return result
    } catch (error) {
      client.release(error as Error)
      throw error
    }
  }
  pool.query = bounded as unknown as PostgresPool['query']
}

/**
 * Ends `client`'s connection as soon as one of its queries times out on the client side. Such a
 * connection is in an unknown state: the server may still answer the abandoned statement, which
 * pg would take for the answer to the next one (a transaction's `ROLLBACK` would otherwise wait
 * behind it for a whole timeout more). Ended, it fails what follows at once and leaves the pool.
 */
function endOnReadTimeout(client: PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown
  client.query = ((...args: unknown[]) => {
    const result = query(...args)
    if (result instanceof Promise) {
      result.catch((error: unknown) => {
        // end(), not a destroyed socket: an ending client reports no 'error' event (which, on a
        // connection checked out of the pool, nothing would listen to).
        if (error instanceof Error && error.message === READ_TIMEOUT_MESSAGE) void client.end().catch(() => {})
      })
    }
    return result
  }) as PoolClient['query']
}

/**
 * The database a URL names, for messages: `host:port/database`, never the user's password or the
 * URL's query string (which may hold one too).
 */
export function describeDatabase(url: string): string {
  try {
    const { hosts, path } = parseDatabaseHosts(url)
    return `${hosts.map(hostName).join(',')}${path}`
  } catch {
    return 'the PostgreSQL database (its URL could not be parsed)'
  }
}

/** `message` without the URL's password, should a driver ever echo it. */
export function redact(message: string, url: string): string {
  let password = ''
  try {
    password = parseDatabaseHosts(url).password
  } catch {
    // An unparsable URL: nothing known to hide beyond the URL itself.
  }
  let safe = message.split(url).join(describeDatabase(url))
  if (password.length > 0) safe = safe.split(password).join('***')
  return safe
}

/**
 * The error a relay fails to start with when the database cannot be reached or prepared, naming
 * it by host, port and database only.
 */
export function databaseError(url: string, doing: string, error: unknown): RelayError {
  const reason = redact(reasonOf(error), url)
  return new RelayError(
    'ERR_RELAY_DATABASE',
    `cannot ${doing} the PostgreSQL database at ${describeDatabase(url)}: ${reason}`,
    {
      cause: error,
    },
  )
}

// Why a connection failed. Connecting to a name with several addresses (localhost: ::1 and
// 127.0.0.1) fails with an AggregateError whose own message is empty: give its parts.
function reasonOf(error: unknown): string {
  if (error instanceof AggregateError && error.message === '') {
    return error.errors.map((e: unknown) => (e instanceof Error ? e.message : String(e))).join('; ')
  }
  return error instanceof Error ? error.message || error.name : String(error)
}

// The call using the client fails with the same error, and that is where it is handled.
function ignoreError(): void {}

/**
 * Runs `work` in one transaction on one connection of `pool`: committed whole, or rolled back when
 * it throws, or when `commit` (given the result) says no, so an answer that refuses a change
 * leaves nothing written. A connection that failed mid-transaction is discarded, not reused.
 *
 * @throws {RelayError} `ERR_RELAY_UNREPLICATED` when the commit stopped waiting for a synchronous
 * standby: the caller must not acknowledge what a failover could lose (ingest answers 503).
 */
export async function transaction<T>(
  pool: PostgresPool,
  work: (client: PoolClient) => Promise<T>,
  commit: (result: T) => boolean = () => true,
): Promise<T> {
  const client = await pool.connect()
  let failed: unknown
  // A commit whose wait for a synchronous standby was cancelled (pg_cancel_backend) succeeds with
  // only a warning: committed on the primary, perhaps not on the standby a failover promotes.
  let unreplicated = false
  const onNotice = (notice: { message?: string | undefined }) => {
    if (notice.message?.includes(UNREPLICATED_WARNING) === true) unreplicated = true
  }
  client.on('notice', onNotice)
  try {
    await client.query('BEGIN')
    const result = await work(client)
    await client.query(commit(result) ? 'COMMIT' : 'ROLLBACK')
    if (unreplicated) {
      throw new RelayError(
        'ERR_RELAY_UNREPLICATED',
        'the commit was not confirmed by the synchronous standby (its wait was cancelled): on the primary only',
      )
    }
    return result
  } catch (error) {
    failed = error
    await client.query('ROLLBACK').catch(() => {})
    throw error
  } finally {
    client.off('notice', onNotice)
    client.release(failed !== undefined)
  }
}

// The start of PostgreSQL's warning when a commit stops waiting for its synchronous standby.
const UNREPLICATED_WARNING = 'canceling wait for synchronous replication'
