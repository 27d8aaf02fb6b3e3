import cluster from 'node:cluster'
import { env, stderr, stdout } from 'node:process'
import { describeStore } from '../relay/config/database-value'
import { RELAY_DEFAULTS } from '../relay/config/defaults'
import { configWarnings, logStartupWarnings, privateNetworkWarnings } from '../relay/config/startup-warnings'
import { validateRelayOptions } from '../relay/config/validate'
import { createRelay, loadRelayConfig, type Relay, RelayConfigError, type RelayOptions } from '../relay/index'
import type { ResolvedRelayOptions } from '../relay/config/options'
import { type LogFormat, logFormatFrom, plural, useLogLevel } from '../relay/log'
import { nonBlockingStderr, writeLogTo } from '../relay/log-sink'
import { isPostgresUrl } from '../relay/config/database-value'
import { openStore } from '../relay/store/open-store'
import { logRefusedReload } from '../relay/sources/reload-plan'
import { parseRelayArgs, type RelayArgs } from './relay-args'
import { reloadOnHangup } from './reload-on-hangup'
import { checkedReload } from './workers/pool-reload'
import { runWorkerPool, WORKER_ENV } from './workers/primary'
import { runRelayWorker } from './workers/worker'
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE } from './exit-codes'

/**
 * `tracklet relay --config FILE [--database URL] [--port N] [--host H] [--workers N] [--check]`: loads and
 * validates the config (its `${NAME}` references read from the environment), then starts the
 * relay, prints the URL it listens on and the store it opened, and runs until SIGINT or SIGTERM,
 * when it closes cleanly. With `--check` it validates, prints every problem and warning, opens
 * nothing and exits. On SIGHUP it reads the file again and applies its `sources` and `alerts`
 * (docs/relay.md, "Reloading the config file"). The outbox is `--database`, else the config's `database`, else
 * `DATABASE_URL` (only when the config names none). Returns the exit code.
 * The relay's log goes to stderr, one line per event: text, or JSON with `LOG_FORMAT=json`.
 * With `workers` above 1 this process is the primary of that many relay processes (node:cluster).
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
  // A worker forked by the primary: its options come from the primary, not from the file.
  if (cluster.isWorker && env[WORKER_ENV] !== undefined) return runWorker(format)
  let options: RelayOptions
  try {
    options = await loadRelayConfig(parsed.config, env)
  } catch (error) {
    return failed(error)
  }
  const { options: final, origins } = withOverrides(options, parsed)
  if (parsed.check) return check(final, origins)
  // On SIGHUP: the file read again, with the same command line applied over it.
  const reread = async () => withOverrides(await loadRelayConfig(parsed.config, env), parsed).options
  let resolved: ResolvedRelayOptions
  try {
    resolved = validateRelayOptions(final)
  } catch (error) {
    return failed(error, origins)
  }
  if (resolved.workers > 1) return runPrimary(final, resolved, origins, format, reread)

  const stopLogging = writeLogTo(nonBlockingStderr(), format)
  const starting = createRelay(final)
  // Listened for at once: a SIGHUP while the relay starts is applied once it runs, not fatal.
  const stopReloading = reloadOnHangup(async () => {
    const running = await starting
    let next: RelayOptions
    try {
      next = await reread()
    } catch (error) {
      return logRefusedReload(error)
    }
    // Refused (every problem logged at error) or applied: the relay logs which.
    await running.reload(next)
  })
  let relay: Relay
  try {
    relay = await starting
  } catch (error) {
    stopReloading()
    await stopLogging()
    return failed(error, origins)
  }
  // Listened for before the URL is printed: a supervisor (or a test) that sends SIGTERM as soon as
  // it reads the URL must find the handler in place, not Node's default, which ends the process
  // without closing the relay.
  const stopped = new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', resolve)
    process.once('SIGTERM', resolve)
  })
  stdout.write(`tracklet relay listening on ${relay.url} (${storeLine(final, origins)})\n`)

  const signal = await stopped
  stdout.write(`tracklet relay: ${signal} received, closing\n`)
  stopReloading()
  await relay.close()
  await stopLogging()
  return EXIT_OK
}

/** Where an option given outside the config file came from, to name it in messages. */
type Origins = Partial<Record<'database' | 'port' | 'host' | 'workers', string>>

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
  if (args.workers !== undefined) [final.workers, origins.workers] = [args.workers, '--workers']
  const fromEnv = env['DATABASE_URL']
  if (args.database !== undefined) [final.database, origins.database] = [args.database, '--database']
  else if (options.database === undefined && fromEnv !== undefined && fromEnv !== '')
    [final.database, origins.database] = [fromEnv, 'DATABASE_URL']
  return { options: final, origins }
}

// What `--check` cannot see: it opens nothing, and the admin API's sources live in the store.
const STORE_SOURCES_UNCHECKED =
  "the sources created through the admin API are the store's and are not checked (--check opens nothing); " +
  'a relay serves those it can decrypt with secretsKey and names the others on /healthz'

/** `--check`: every problem (exit 1) or none (exit 0), and every warning; nothing is opened. */
async function check(options: RelayOptions, origins: Origins): Promise<number> {
  let resolved: ReturnType<typeof validateRelayOptions>
  try {
    resolved = validateRelayOptions(options)
    refuseUnsharedStore(resolved.database, resolved.workers)
    // Each function compiled as the relay's start would (docs/functions.md), loaded only if needed.
    await (await import('../relay/features/functions/load')).compileFunctions(resolved)
  } catch (error) {
    return failed(error, origins)
  }
  const warnings = [...configWarnings(resolved), ...(await privateNetworkWarnings(resolved))]
  for (const warning of warnings) stderr.write(`tracklet relay: warning: ${warning}\n`)
  stdout.write(
    `tracklet relay: the config is valid (${plural(resolved.sources.length, 'source')}, ${storeLine(options, origins)}, ${plural(warnings.length, 'warning')})\n`,
  )
  stdout.write(`tracklet relay: ${STORE_SOURCES_UNCHECKED}\n`)
  return EXIT_OK
}

/**
 * The primary of `workers` relay processes: prepares the store once, forks, prints the URL once
 * every worker listens, and on SIGINT or SIGTERM stops them all. Exit 0 only when all closed cleanly.
 */
async function runPrimary(
  options: RelayOptions,
  resolved: ResolvedRelayOptions,
  origins: Origins,
  format: LogFormat,
  reread: () => Promise<RelayOptions>,
): Promise<number> {
  const { database, workers } = resolved
  try {
    refuseUnsharedStore(database, workers)
  } catch (error) {
    return failed(error, origins)
  }
  const stopLogging = writeLogTo(nonBlockingStderr(), format)
  const releaseLogLevel = useLogLevel(resolved.logLevel)
  // Once for all the workers (each is a relay of its own, which would print them again); awaited
  // below before the log stops, so a late host-name lookup's warning is not written after it.
  const warned = logStartupWarnings(resolved)
  // A SIGHUP before the pool listens for it is kept (not fatal) and sent again once it does.
  let hungUp = false
  const hangUpWhileStarting = () => {
    hungUp = true
  }
  process.on('SIGHUP', hangUpWhileStarting)
  try {
    // Once, before any worker runs: the schema brought up to date, and on SQLite the leases of
    // the previous run cleared (each worker leaves the others' leases alone).
    await (await openStore(database)).close()
  } catch (error) {
    process.off('SIGHUP', hangUpWhileStarting)
    await warned
    releaseLogLevel()
    await stopLogging()
    return failed(error, origins)
  }
  const pool = runWorkerPool(workers, options, {
    listening: (url) =>
      stdout.write(`tracklet relay listening on ${url} (${storeLine(options, origins)}, ${workers} workers)\n`),
    stopping: (signal) => stdout.write(`tracklet relay: ${signal} received, closing ${workers} workers\n`),
    reload: (running) => checkedReload(running, reread),
  })
  process.off('SIGHUP', hangUpWhileStarting)
  if (hungUp) process.kill(process.pid, 'SIGHUP')
  const end = await pool
  await warned
  releaseLogLevel()
  await stopLogging()
  return end.kind === 'stopped' && end.clean ? EXIT_OK : EXIT_FAILED
}

/** Several workers need a store each of them opens: a database of one process's own is refused. */
function refuseUnsharedStore(database: string, workers: number): void {
  if (workers === 1 || isPostgresUrl(database) || (database !== ':memory:' && database !== '')) return
  throw new RelayConfigError(
    'workers',
    `${workers} workers need one store they all open: ${JSON.stringify(database)} is a database of one process's own (use a SQLite file or a postgres:// URL)`,
  )
}

/** A worker of the primary above: one relay on the shared port and store. */
async function runWorker(format: LogFormat): Promise<number> {
  const stopLogging = writeLogTo(nonBlockingStderr(), format, Number(env[WORKER_ENV]))
  const code = await runRelayWorker((error) => failed(error))
  await stopLogging()
  return code
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
