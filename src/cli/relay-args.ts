import type { ParseArgsConfig } from 'node:util'
import { type FlagValues, readFlags } from './read-flags'

/** What `tracklet relay` was asked to do, once its arguments are known to be well-formed. */
export interface RelayArgs {
  config: string
  /** `--database`: beats the config's `database` and `DATABASE_URL`. */
  database: string | undefined
  port: number | undefined
  host: string | undefined
  /** `--check`: validate and report, open nothing. */
  check: boolean
  /** `--workers`: relay processes on one port and one store; beats the config's `workers`. */
  workers: number | undefined
}

const OPTIONS = {
  config: { type: 'string', short: 'c' },
  database: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  check: { type: 'boolean' },
  workers: { type: 'string' },
} as const satisfies ParseArgsConfig['options']

/** `tracklet relay`'s arguments, or what is wrong with them as one line. */
export function parseRelayArgs(args: readonly string[]): RelayArgs | { problem: string } {
  const read = readFlags(args, OPTIONS)
  if ('problem' in read) return read
  const { values } = read
  const config = values['config']
  if (typeof config !== 'string' || config === '') return { problem: '--config is required' }
  const port = values['port']
  if (typeof port === 'string' && !/^\d+$/.test(port)) {
    return { problem: `--port must be a whole number from 0 to 65535, got ${JSON.stringify(port)}` }
  }
  const workers = values['workers']
  if (typeof workers === 'string' && !/^\d+$/.test(workers)) {
    return { problem: `--workers must be a whole number from 1 to 256, got ${JSON.stringify(workers)}` }
  }
  const text = (value: FlagValues[string]) => (typeof value === 'string' ? value : undefined)
  return {
    config,
    database: text(values['database']),
    port: typeof port === 'string' ? Number(port) : undefined,
    host: text(values['host']),
    check: values['check'] === true,
    // The range is checked with the config's `workers`, by the one validation.
    workers: typeof workers === 'string' ? Number(workers) : undefined,
  }
}
