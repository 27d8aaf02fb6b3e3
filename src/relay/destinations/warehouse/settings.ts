import { RelayConfigError } from '../../errors'
import { ConfigProblems, describeSafely, integer, objectOf, type Rule } from '../../kit/rules'
import { describeDatabase } from '../../kit/postgres/pool'
import { isIdentifier, MAX_IDENTIFIER_BYTES, schemaNameOf } from './schema/names'

/** A source's `Warehouse` settings (docs/warehouse.md, "Settings"). */
export interface WarehouseSettings {
  /**
   * The PostgreSQL database, `postgres://user:password@host:5432/database`. Its password is a
   * secret: write it as `${NAME}` (an environment variable), never shown.
   */
  readonly url: string
  /** The schema the source's tables are in. @default the source's name as an identifier */
  readonly schema?: string | undefined
  /** The longest a message waits for its batch to fill, ms. @default 30000 */
  readonly loadEvery: number
  /** The most messages one load writes. @default 10000 */
  readonly maxBatch: number
}

/** What a setting left out means (docs/warehouse.md's table of settings is checked against it). */
export const WAREHOUSE_DEFAULTS = Object.freeze({ loadEvery: 30_000, maxBatch: 10_000 })

/** The bounds of the numeric settings (inclusive). */
export const WAREHOUSE_LIMITS = Object.freeze({
  /** Up to an hour: longer only holds deliveries (and their leases) without a gain. */
  loadEvery: Object.freeze({ min: 0, max: 3_600_000 }),
  /** One load is one statement per table with a parameter per column: memory grows with it. */
  maxBatch: Object.freeze({ min: 1, max: 50_000 }),
})

// The password as an environment reference, as the docs write it.
const EXAMPLE_URL = `postgres://loader:$${'{'}WH_PASSWORD}@wh:5432/analytics`

const url: Rule<string> = (value, field, problems) => {
  if (typeof value !== 'string') {
    problems.add(field, `must be a postgres:// URL, got ${describeSafely(value)}`)
    return undefined
  }
  let parsed: URL | undefined
  try {
    parsed = new URL(value)
  } catch {
    // The value is not shown: it may hold the password.
  }
  if (parsed === undefined || (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:')) {
    problems.add(field, `must be a postgres:// (or postgresql://) URL such as ${EXAMPLE_URL}`)
    return undefined
  }
  return value
}

const schema: Rule<string> = (value, field, problems) => {
  if (typeof value === 'string' && isIdentifier(value)) return value
  const got = typeof value === 'string' ? JSON.stringify(value) : describeSafely(value)
  const rule = 'lower-case letters, digits and _ (not starting with a digit)'
  problems.add(field, `must be a schema name of ${rule}, at most ${MAX_IDENTIFIER_BYTES} bytes, got ${got}`)
  return undefined
}

const RULES = {
  url,
  schema,
  loadEvery: integer(WAREHOUSE_LIMITS.loadEvery.min, WAREHOUSE_LIMITS.loadEvery.max),
  maxBatch: integer(WAREHOUSE_LIMITS.maxBatch.min, WAREHOUSE_LIMITS.maxBatch.max),
}

/**
 * Checks a source's raw `Warehouse` settings and fills in the defaults.
 *
 * @param path where they are, for messages (`sources[0].destinations.Warehouse`).
 * @throws {RelayConfigError} listing every problem, each with its path.
 */
export function parseWarehouseSettings(raw: unknown, path: string): WarehouseSettings {
  const problems = new ConfigProblems()
  const checked = objectOf<WarehouseSettings>(RULES, 'a Warehouse setting')(raw, path, problems) ?? {}
  if (problems.list.length === 0 && checked.url === undefined) problems.add(`${path}.url`, 'is required')
  if (problems.list.length > 0) throw new RelayConfigError(path, '', { problems: problems.list })
  return Object.freeze({ ...WAREHOUSE_DEFAULTS, ...checked, url: checked.url! })
}

/** The secrets in the settings: the URL's password (as written and decoded), for redaction. */
export function warehouseSecrets(settings: WarehouseSettings): string[] {
  const password = new URL(settings.url).password
  if (password === '') return []
  const decoded = decodeURIComponent(password)
  return decoded === password ? [password] : [password, decoded]
}

/** The schema a source's tables go to: the setting, or the source's name as an identifier. */
export function schemaOf(settings: WarehouseSettings, source: string): string {
  return settings.schema ?? schemaNameOf(source)
}

/**
 * The warehouse as a target is shown (the breaker's circuit, the endpoints view, outcomes):
 * `postgres://host:5432/database?schema=web`, never the user or password.
 */
export function warehouseTarget(settings: WarehouseSettings, source: string): string {
  return `postgres://${describeDatabase(settings.url)}?schema=${schemaOf(settings, source)}`
}
