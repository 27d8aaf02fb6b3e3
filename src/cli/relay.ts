import { env, stderr, stdout } from 'node:process'
import { parseArgs } from 'node:util'
import { createRelay, loadRelayConfig, type Relay } from '../relay/index'
import { type LogFormat, logFormatFrom } from '../relay/log'
import { nonBlockingStderr, writeLogTo } from '../relay/log-sink'

const USAGE = 'usage: tracklet relay --config tracklet.config.json [--database postgres://… | FILE]'

/**
 * `tracklet relay --config FILE [--database URL]`: loads and validates the config, starts the
 * relay, prints the URL it listens on, and runs until SIGINT or SIGTERM, when it closes cleanly.
 * The outbox is `--database`, else the `DATABASE_URL` environment variable, else the config
 * file's `database` (so one config file serves relays pointed at a shared PostgreSQL).
 * Returns the exit code.
 * The relay's log goes to stderr, one line per event: text, or JSON with `LOG_FORMAT=json`.
 */
export async function runRelay(args: string[]): Promise<number> {
  let configPath: string | undefined
  let database: string | undefined
  try {
    const { values } = parseArgs({
      args,
      options: { config: { type: 'string', short: 'c' }, database: { type: 'string' } },
      strict: true,
    })
    configPath = values.config
    database = values.database ?? (env['DATABASE_URL'] || undefined)
  } catch (error) {
    stderr.write(`tracklet relay: ${(error as Error).message}\n${USAGE}\n`)
    return 2
  }
  if (configPath === undefined) {
    stderr.write(`tracklet relay: --config is required\n${USAGE}\n`)
    return 2
  }
  let format: LogFormat
  try {
    format = logFormatFrom(process.env['LOG_FORMAT'])
  } catch (error) {
    stderr.write(`tracklet relay: ${(error as Error).message}\n`)
    return 2
  }
  const stopLogging = writeLogTo(nonBlockingStderr(), format)
  let relay: Relay
  try {
    const options = await loadRelayConfig(configPath)
    relay = await createRelay(database === undefined ? options : { ...options, database })
  } catch (error) {
    await stopLogging()
    stderr.write(`tracklet relay: ${(error as Error).message}\n`)
    return 1
  }
  stdout.write(`tracklet relay listening on ${relay.url}\n`)

  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', resolve)
    process.once('SIGTERM', resolve)
  })
  stdout.write(`tracklet relay: ${signal} received, closing\n`)
  await relay.close()
  await stopLogging()
  return 0
}
