import type { Pool } from 'pg'
import { RelayError } from '../../errors'
import { log } from '../../log'
import { loadDriver } from '../load-driver'

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
  /** How long to wait for a connection (a new one, or a free one from the pool), ms. */
  connectionTimeoutMillis: number
  /** How long a statement may take before the relay gives up on it (a silent network), ms. */
  queryTimeoutMillis: number
}

export const DEFAULT_POOL_SETTINGS: PoolSettings = Object.freeze({
  max: 10,
  connectionTimeoutMillis: 10_000,
  queryTimeoutMillis: 30_000,
})

// int8 (bigint): ids, epoch-ms times and counts. Every value the relay stores fits a JS number
// exactly (ids and times are far below 2^53), so they are read as numbers, not strings.
const INT8_OID = 20

/**
 * Opens a pool of connections to the PostgreSQL database at `url`, loading `pg` only now (an
 * optional peer dependency). Connections are made on demand: this does not touch the network.
 * A connection that breaks while idle (the server restarted, the network dropped) is dropped
 * from the pool and logged, never an uncaught error; the next query opens a new one.
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
  const pool = new driver.Pool({
    connectionString: url,
    max: settings.max,
    connectionTimeoutMillis: settings.connectionTimeoutMillis,
    query_timeout: settings.queryTimeoutMillis,
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
  return pool
}

/**
 * The database a URL names, for messages: `host:port/database`, never the user's password or the
 * URL's query string (which may hold one too).
 */
export function describeDatabase(url: string): string {
  try {
    const parsed = new URL(url)
    const host = parsed.hostname === '' ? 'localhost' : parsed.hostname
    return `${host}:${parsed.port === '' ? '5432' : parsed.port}${parsed.pathname}`
  } catch {
    return 'the PostgreSQL database (its URL could not be parsed)'
  }
}

/** `message` without the URL's password, should a driver ever echo it. */
export function redact(message: string, url: string): string {
  let password = ''
  try {
    password = decodeURIComponent(new URL(url).password)
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
