import { didYouMean } from '../../shared/nearest-name'
import { hostName, parseDatabaseHosts } from '../kit/postgres/hosts'
import type { Rule } from '../kit/rules'

// Anything shaped like a URL: a scheme and `://`, however the scheme is spelt.
const URL_SHAPED = /^\s*([a-z][a-z0-9+.-]*):\/\//i
// `user:password@` anywhere in the value: in a URL of any scheme, or in one whose scheme is missing.
const USER_INFO = /([^\s:/?#@]*):[^\s/?#@]*@/g
// `user:password@host…` with no scheme at all: a database URL that lost its `postgres://`.
const SCHEMELESS_CREDENTIALS = /^[^\s:/@]+:[^\s/@]*@/
const STORE_SCHEMES = ['postgres', 'postgresql']

/** Whether a `database` option names a PostgreSQL server rather than a SQLite file. */
export function isPostgresUrl(database: string): boolean {
  return /^postgres(ql)?:\/\//i.test(database)
}

/**
 * A `database` value as it may be shown: any `user:password@` cut to `user@` and a URL's query
 * string (which may hold a password too) dropped, whatever the scheme's spelling (`postgress://`,
 * `pg://`, a leading space): a mistyped URL is still a secret.
 */
export function redactDatabase(database: string): string {
  const redacted = database.replace(USER_INFO, '$1@')
  return URL_SHAPED.test(database) ? redacted.replace(/[?#].*$/s, '') : redacted
}

/**
 * Which store a `database` value opens and where, for the start-up line: `postgres store at
 * host:5432/db` or `sqlite store at /path/tracklet.db`, never a password.
 */
export function describeStore(database: string): string {
  if (!isPostgresUrl(database)) return `sqlite store at ${redactDatabase(database)}`
  try {
    const url = new URL(database)
    return `postgres store at ${url.host}${url.pathname}`
  } catch {
    // Several hosts (`db1:5432,db2:5432`), which the WHATWG URL does not take.
  }
  try {
    const { hosts, path } = parseDatabaseHosts(database)
    return `postgres store at ${hosts.map(hostName).join(',')}${path}`
  } catch {
    return `postgres store at ${redactDatabase(database)}`
  }
}

/**
 * The `database` option: a SQLite file path, `:memory:`, or a `postgres://` URL (one host or
 * several, libpq's way, with a supported `target_session_attrs`). A value shaped
 * like a URL with another scheme, or like one missing its scheme, is refused rather than taken as
 * a file name (which would create `postgress:/…` beside the relay, and print the password in
 * the error). Messages never show the value.
 */
export const databaseValue: Rule<string> = (value, field, problems) => {
  if (typeof value !== 'string' || value === '') {
    problems.add(field, `must be a non-empty string (a file path or a postgres:// URL), got ${typeof value}`)
    return undefined
  }
  if (value.trim() !== value) {
    problems.add(field, 'starts or ends with whitespace: remove it (a file path or a postgres:// URL)')
    return undefined
  }
  const scheme = URL_SHAPED.exec(value)?.[1]
  if (scheme !== undefined && !isPostgresUrl(value)) {
    problems.add(
      field,
      `is a URL with the scheme ${JSON.stringify(`${scheme}:`)}${didYouMean(scheme, STORE_SCHEMES)}: the relay opens postgres:// (or postgresql://) URLs and SQLite file paths`,
    )
    return undefined
  }
  if (isPostgresUrl(value)) {
    // Its hosts and target_session_attrs, read as the store will (never showing the value).
    try {
      parseDatabaseHosts(value)
    } catch (error) {
      problems.add(field, (error as Error).message)
      return undefined
    }
  }
  if (scheme === undefined && SCHEMELESS_CREDENTIALS.test(value)) {
    problems.add(field, 'looks like a database URL without its scheme: write postgres://user:password@host/db')
    return undefined
  }
  return value
}
