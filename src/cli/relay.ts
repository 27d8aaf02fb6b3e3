import { env, stderr, stdout } from 'node:process'
import { describeStore } from '../relay/config/database-value'
import { RELAY_DEFAULTS } from '../relay/config/defaults'
import { configWarnings, privateNetworkWarnings } from '../relay/config/startup-warnings'
import { validateRelayOptions } from '../relay/config/validate'
import { createRelay, loadRelayConfig, type Relay, RelayConfigError, type RelayOptions } from '../relay/index'
import { type LogFormat, logFormatFrom, plural } from '../relay/log'
import { nonBlockingStderr, writeLogTo } from '../relay/log-sink'
import { parseRelayArgs, type RelayArgs } from './relay-args'

const EXIT_OK = 0
const EXIT_FAILED = 1
const EXIT_USAGE = 2

/**
 * `tracklet relay --config FILE [--database URL] [--port N] [--host H] [--check]`: loads and
 * validates the config (its `${NAME}` references read from the environment), then starts the
 * relay, prints the URL it listens on and the store it opened, and runs until SIGINT or SIGTERM,
 * when it closes cleanly. With `--check` it validates, prints every problem and warning, opens
 * nothing and exits. The outbox is `--database`, else the config's `database`, else
 * `DATABASE_URL` (only when the config names none). Returns the exit code.
 * The relay's log goes to stderr, one line per event: text, or JSON with `LOG_FORMAT=json`.
 */
export async function runRelay(args: string[]): Promise<number> {
  const parsed = parseRelayArgs(args)
  if ('problem' in parsed) {
    stderr.write(`tracklet relay: ${parsed.problem} (see tracklet relay --help)\n`)
    return EXIT_USAGE
  }
  let format: LogFormat
  try {
    format = logFormatFrom(env['LOG_FORMAT'])
  } catch (error) {
    stderr.write(`tracklet relay: ${(error as Error).message}\n`)
    return EXIT_USAGE
  }
  let options: RelayOptions
  try {
    options = await loadRelayConfig(parsed.config, env)
  } catch (error) {
    return failed(error)
  }
  const { options: final, origins } = withOverrides(options, parsed)
  if (parsed.check) return check(final, origins)

  const stopLogging = writeLogTo(nonBlockingStderr(), format)
  let relay: Relay
  try {
    relay = await createRelay(final)
  } catch (error) {
    await stopLogging()
    return failed(error, origins)
  }
  stdout.write(`tracklet relay listening on ${relay.url} (${storeLine(final, origins)})\n`)

  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', resolve)
    process.once('SIGTERM', resolve)
  })
  stdout.write(`tracklet relay: ${signal} received, closing\n`)
  await relay.close()
  await stopLogging()
  return EXIT_OK
}

/** Where an option given outside the config file came from, to name it in messages. */
type Origins = Partial<Record<'database' | 'port' | 'host', string>>

/**
 * The config with the command line applied: `--port` and `--host` override it; the database is
 * `--database`, else the config's `database`, else `DATABASE_URL` (an ambient variable never
 * beats a config that names its database).
 */
function withOverrides(options: RelayOptions, args: RelayArgs): { options: RelayOptions; origins: Origins } {
  const final: RelayOptions = { ...options }
  const origins: Origins = {}
  if (args.port !== undefined) [final.port, origins.port] = [args.port, '--port']
  if (args.host !== undefined) [final.host, origins.host] = [args.host, '--host']
  const fromEnv = env['DATABASE_URL']
  if (args.database !== undefined) [final.database, origins.database] = [args.database, '--database']
  else if (options.database === undefined && fromEnv !== undefined && fromEnv !== '')
    [final.database, origins.database] = [fromEnv, 'DATABASE_URL']
  return { options: final, origins }
}

/** `--check`: every problem (exit 1) or none (exit 0), and every warning; nothing is opened. */
async function check(options: RelayOptions, origins: Origins): Promise<number> {
  let resolved: ReturnType<typeof validateRelayOptions>
  try {
    resolved = validateRelayOptions(options)
  } catch (error) {
    return failed(error, origins)
  }
  const warnings = [...configWarnings(resolved), ...(await privateNetworkWarnings(resolved))]
  for (const warning of warnings) stderr.write(`tracklet relay: warning: ${warning}\n`)
  stdout.write(
    `tracklet relay: the config is valid (${plural(resolved.sources.length, 'source')}, ${storeLine(options, origins)}, ${plural(warnings.length, 'warning')})\n`,
  )
  return EXIT_OK
}

function storeLine(options: RelayOptions, origins: Origins): string {
  const store = describeStore(options.database ?? RELAY_DEFAULTS.database)
  return origins.database === undefined ? store : `${store}, from ${origins.database}`
}

/** Prints why the relay cannot start, one line per problem, and returns the exit code. */
function failed(error: unknown, origins: Origins = {}): number {
  if (error instanceof RelayConfigError) {
    for (const { field, message } of error.problems) {
      const origin = origins[field as keyof Origins]
      stderr.write(`tracklet relay: ${origin === undefined ? field : `${origin} (${field})`}: ${message}\n`)
    }
  } else {
    stderr.write(`tracklet relay: ${(error as Error).message}\n`)
  }
  return EXIT_FAILED
}
