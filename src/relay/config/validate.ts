import { alertsRule } from './alerts-option'
import { checkDestinationConsent, withoutConsent } from './consent-setting'
import { MAX_TIMEOUT_MS } from '../../webhooks/limits'
import { DESTINATIONS } from '../destinations/index'
import type { DestinationModule } from '../destinations/destination'
import { isPlainObject } from '../../shared/validate'
import { RelayConfigError } from '../errors'
import { RELAY_PEERS, requirePeer } from '../peers'
import { LOG_LEVELS, type LogLevel, logLevelFrom } from '../log'
import type {
  BreakerOptions,
  RelayOptions,
  RelaySource,
  ResolvedRelayOptions,
  SourceDestinations,
  SourceSchema,
} from './options'
import { databaseValue } from './database-value'
import { SECRETS_KEY_ENV, secretsKeyRule } from './secrets-key'
import { checkDestinationFunction, functionMemoryRule, functionTimeoutRule, withoutFunction } from './function-settings'
import { MAX_RESPONSE_BODY_LIMIT } from '../../webhooks/limits'
import { BREAKER_DEFAULTS, RELAY_DEFAULTS } from './defaults'
import { planRule, schemaOf, unplannedRule, violationsRule } from './plan-rules'
import { sourceNameRule } from './sources'
import {
  ConfigProblems,
  describeSafely,
  flag,
  integer,
  listOf,
  objectOf,
  oneOf,
  type Rule,
  type RulesOf,
  secret,
  text,
} from '../kit/rules'

// Probes at least every hour: past that, a receiver back for long would still wait, unseen.
const PROBE_INTERVAL = integer(100, 3_600_000)

const BREAKER_RULES: RulesOf<BreakerOptions> = {
  failureThreshold: integer(1, 10_000),
  probeInterval: PROBE_INTERVAL,
  maxProbeInterval: PROBE_INTERVAL,
}

const SCHEMA_RULES: RulesOf<SourceSchema> = {
  // A misspelt rule would otherwise block nothing, silently.
  blockedEvents: listOf(text, 'event names'),
  plan: planRule,
  unplanned: unplannedRule,
  violations: violationsRule,
}

// Each destination checks its own settings (destinations/<name>/), under the source's path; the
// function's keys are the relay's, checked here alike for every destination.
function destinationRule(module: DestinationModule): Rule<Record<string, unknown>> {
  return (value, field, problems) => {
    if (!isPlainObject(value)) {
      problems.add(field, `must be an object of settings, got ${describeSafely(value)}`)
      return undefined
    }
    const fn = checkDestinationFunction(value, field, problems)
    // A consent rule is the relay's too (docs/privacy.md), whatever the destination.
    const consent = checkDestinationConsent(value, field, problems)
    try {
      const settings = module.parseSettings(withoutFunction(withoutConsent(value)), field)
      return { ...(settings as Record<string, unknown>), ...fn, ...consent }
    } catch (error) {
      if (!(error instanceof RelayConfigError)) throw error
      // The destination's own error (a WebhookConfigError) stays the cause.
      for (const problem of error.problems) problems.add(problem.field, problem.message, error.cause ?? error)
      return undefined
    }
  }
}

const DESTINATION_RULES = Object.fromEntries(
  DESTINATIONS.map((module) => [module.name, destinationRule(module)]),
) as RulesOf<SourceDestinations>

const SOURCE_RULES: RulesOf<RelaySource> = {
  name: sourceNameRule,
  // The write key's value is a secret: its type is described, never the value itself.
  writeKey: secret,
  destinations: objectOf(DESTINATION_RULES, 'a known destination (names are case sensitive)'),
  schema: objectOf(SCHEMA_RULES, 'a schema rule'),
}

const OPTION_RULES: RulesOf<RelayOptions> = {
  port: integer(0, 65_535),
  host: text,
  database: databaseValue,
  adminToken: secret,
  metricsToken: secret,
  readToken: secret,
  secretsKey: secretsKeyRule,
  allowPrivateNetworks: flag,
  trustProxy: flag,
  sources: sourceList,
  concurrency: integer(1, 10_000),
  leaseTimeout: integer(1000, 3_600_000),
  // Up to ten years: past that a delivered row is as good as kept forever.
  retention: integer(1000, 10 * 365 * 24 * 60 * 60 * 1000),
  webhookTimeout: integer(1, MAX_TIMEOUT_MS),
  responseBodyLimit: integer(0, MAX_RESPONSE_BODY_LIMIT),
  headersTimeout: integer(1, 600_000),
  requestTimeout: integer(1, 3_600_000),
  maxHeaderSize: integer(1024, 1_048_576),
  breaker: objectOf(BREAKER_RULES, 'a breaker option'),
  maxInFlightPerUrl: integer(1, 10_000),
  // Under 100 ms even a healthy database would fail calls; past ten minutes a client gave up long ago.
  storeTimeout: integer(100, 600_000),
  logLevel: oneOf(LOG_LEVELS),
  // Each worker holds its own connections and memory: past a few hundred it is a typo.
  workers: integer(1, 256),
  // Each reader may hold a megabyte it could not send yet: a thousand is a gigabyte.
  streamReaders: integer(1, 1000),
  alerts: alertsRule,
  functionTimeout: functionTimeoutRule,
  functionMemory: functionMemoryRule,
}

/** Every option a relay (and its config file) takes, at the top level. */
export const RELAY_OPTION_NAMES: readonly string[] = Object.keys(OPTION_RULES)

const checkOptions = objectOf(OPTION_RULES, 'a relay option')
const checkSource = objectOf(SOURCE_RULES, 'a source setting')

/**
 * Checks one source's fields by the config file's rules (the admin API's `PUT /v1/sources/:name`
 * uses them too), recording each problem under `field`; the valid fields.
 */
export const checkSourceFields: Rule<Partial<RelaySource>> = checkSource

function sourceList(value: unknown, field: string, problems: ConfigProblems): RelaySource[] | undefined {
  // Empty is allowed: every source may come from the admin API (docs/relay.md, "Two kinds of source").
  if (!Array.isArray(value)) {
    problems.add(field, `must be an array of sources, got ${describeSafely(value)}`)
    return undefined
  }
  const names = new Set<string>()
  const writeKeys = new Set<string>()
  const sources: RelaySource[] = []
  value.forEach((item: unknown, index) => {
    const path = `${field}[${index}]`
    const source = checkSource(item, path, problems)
    if (source === undefined) return
    const { name, writeKey } = source
    if (isPlainObject(item) && item['name'] === undefined) problems.add(`${path}.name`, 'is required')
    if (isPlainObject(item) && item['writeKey'] === undefined)
      problems.add(`${path}.writeKey`, 'must be a non-empty string, got undefined')
    if (name !== undefined && names.has(name))
      problems.add(`${path}.name`, `${JSON.stringify(name)} is used by another source`)
    if (writeKey !== undefined && writeKeys.has(writeKey))
      problems.add(`${path}.writeKey`, 'is the write key of another source')
    if (name === undefined || writeKey === undefined) return
    names.add(name)
    writeKeys.add(writeKey)
    sources.push({
      name,
      writeKey,
      destinations: source.destinations ?? {},
      schema: schemaOf(source.schema ?? {}, `${path}.schema`, problems),
    })
  })
  return sources
}

/**
 * Validates relay options (from code or a config file) and applies the defaults: the one check
 * both `createRelay` and `loadRelayConfig` run. Every problem is found before any is reported:
 * unknown keys at any depth (each naming the nearest known key), values out of range, and
 * settings the Webhooks destination refuses.
 *
 * @param problems problems found before (such as unset environment variables), reported together.
 * @throws {RelayConfigError} listing every problem; `field` is the first one's path.
 */
export function validateRelayOptions(input: unknown, problems = new ConfigProblems()): ResolvedRelayOptions {
  const given = checkOptions(input, '', problems) ?? {}
  if (isPlainObject(input) && input['sources'] === undefined)
    problems.add(
      'sources',
      'must be an array of sources (empty when every source comes from the admin API), got undefined',
    )
  const breaker = { ...BREAKER_DEFAULTS, ...given.breaker }
  if (breaker.maxProbeInterval < breaker.probeInterval) {
    problems.add(
      'breaker.maxProbeInterval',
      `must be at least breaker.probeInterval (${breaker.probeInterval}), got ${breaker.maxProbeInterval}`,
    )
  }
  const logLevel = given.logLevel ?? logLevelFromEnv(problems)
  const [first] = problems.list
  if (first !== undefined) {
    // The first problem's own error, if one was caught (the destination's), stays the cause.
    const cause = problems.causeOf(first)
    throw new RelayConfigError(first.field, first.message, {
      problems: problems.list,
      ...(cause === undefined ? {} : { cause }),
    })
  }
  // Every relay serves /metrics: a missing prom-client is said here, before anything is opened.
  requirePeer(RELAY_PEERS.metrics, 'prom-client')
  return {
    ...RELAY_DEFAULTS,
    ...given,
    adminToken: given.adminToken,
    metricsToken: given.metricsToken,
    readToken: given.readToken,
    secretsKey: given.secretsKey ?? secretsKeyFromEnv(problems),
    alerts: given.alerts,
    sources: given.sources ?? [],
    breaker,
    logLevel,
  }
}

// Without the option, TRACKLET_SECRETS_KEY (a key is better kept out of the config file).
function secretsKeyFromEnv(problems: ConfigProblems): string | undefined {
  const value = process.env[SECRETS_KEY_ENV]
  if (value === undefined || value === '') return undefined
  return secretsKeyRule(value, SECRETS_KEY_ENV, problems)
}

// Without the option, LOG_LEVEL (so an operator can turn on debug without editing the file).
function logLevelFromEnv(problems: ConfigProblems): LogLevel {
  try {
    return logLevelFrom(process.env['LOG_LEVEL'])
  } catch (error) {
    problems.add('LOG_LEVEL', (error as Error).message.replace(/^LOG_LEVEL /, ''))
    return 'info'
  }
}

/**
 * `workers` forks processes, which only the `tracklet relay` command can do: a value given to
 * `createRelay` must not be ignored.
 */
export function refuseWorkersOutsideCommand(options: ResolvedRelayOptions, sharedByProcesses: boolean): void {
  if (options.workers > 1 && !sharedByProcesses) {
    throw new RelayConfigError(
      'workers',
      `is an option of the \`tracklet relay\` command, which forks that many processes; createRelay runs one relay in this process (start one per process instead), got ${options.workers}`,
    )
  }
}
