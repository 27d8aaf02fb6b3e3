import { readFile } from 'node:fs/promises'
import { type ParseArgsConfig, parseArgs } from 'node:util'
import { request } from 'undici'
import { isPlainObject } from '../shared/validate'
import { asksForHelp } from './help'

/** `tracklet function --help`. */
export const FUNCTION_USAGE = `usage: tracklet function test FILE --event FILE [--settings FILE]
       tracklet function test FILE --source NAME --relay URL --admin-token T [--limit N] [--settings FILE]

Runs a destination's function (docs/functions.md) on events and prints one JSON line per event:
{ "input", "output"?, "dropped"?, "error"?, "logs", "ms" }. Nothing is delivered.

  FILE                  the function's code
  --event FILE          a JSON message, or an array of them, run here (no relay needed)
  --source NAME         run on that source's newest stored messages, on the relay
                        (POST /v1/functions/test, under the relay's limits)
  --relay URL           the relay's base URL (with --source)
  --admin-token T       the relay's admin token (with --source; or $TRACKLET_ADMIN_TOKEN)
  --limit N             how many stored messages (with --source; default 10)
  --settings FILE       a JSON object passed as the function's settings (functionSettings)
  -h, --help            show this help and exit

Exit codes: 0 every event ran (a result may be an error), 1 the code does not compile or the relay
refused, 2 bad arguments.`

const OPTIONS = {
  event: { type: 'string' },
  source: { type: 'string' },
  relay: { type: 'string' },
  'admin-token': { type: 'string' },
  limit: { type: 'string' },
  settings: { type: 'string' },
} as const satisfies ParseArgsConfig['options']

/** Where `tracklet function` writes. */
export interface FunctionIo {
  stdout: { write(text: string): unknown }
  stderr: { write(text: string): unknown }
  env: Record<string, string | undefined>
}

/** A command line problem, answered with exit code 2. */
class UsageError extends Error {}

/** `tracklet function test …`: the function's result on each event, one JSON line each. */
export async function runFunction(args: readonly string[], io: FunctionIo = defaultIo()): Promise<number> {
  if (asksForHelp(args)) {
    io.stdout.write(`${FUNCTION_USAGE}\n`)
    return 0
  }
  try {
    const [verb, ...rest] = args
    if (verb !== 'test')
      throw new UsageError(verb === undefined ? 'no subcommand given (test)' : `unknown subcommand: ${verb}`)
    const { values, positionals } = parseArgs({ args: rest, options: OPTIONS, strict: true, allowPositionals: true })
    if (positionals.length !== 1) throw new UsageError('give one FILE: the function’s code')
    const code = await readText(positionals[0]!, 'the function')
    const settings = values.settings === undefined ? {} : await readJson(values.settings, 'the settings')
    if (!isPlainObject(settings)) throw new UsageError('--settings must hold a JSON object')
    if ((values.event === undefined) === (values.source === undefined))
      throw new UsageError('give either --event FILE or --source NAME (with --relay and --admin-token)')
    const results =
      values.event === undefined
        ? await onRelay(code, settings, values, io)
        : await locally(code, settings, await readJson(values.event, 'the event'), positionals[0]!)
    if (typeof results === 'string') {
      io.stderr.write(`tracklet function: ${results}\n`)
      return 1
    }
    for (const result of results) io.stdout.write(`${JSON.stringify(result)}\n`)
    return 0
  } catch (error) {
    if (!(error instanceof UsageError) && !String((error as { code?: string }).code).startsWith('ERR_PARSE_ARGS'))
      throw error
    io.stderr.write(`tracklet function: ${(error as Error).message}\n\n${FUNCTION_USAGE}\n`)
    return 2
  }
}

// The results, or why there are none (the code does not compile).
async function locally(code: string, settings: Record<string, unknown>, events: unknown, file: string) {
  const list = Array.isArray(events) ? events : [events]
  if (list.length === 0 || !list.every(isPlainObject))
    throw new UsageError('--event must hold a JSON message or an array of them')
  // Loaded only here: the sandbox is not part of the other commands.
  const { testFunction } = await import('../relay/features/functions/test-run')
  try {
    return await testFunction({ code, filename: file, settings }, list)
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_FUNCTION_COMPILE') return (error as Error).message
    throw error
  }
}

async function onRelay(
  code: string,
  settings: Record<string, unknown>,
  values: Partial<Record<keyof typeof OPTIONS, string>>,
  io: FunctionIo,
): Promise<unknown[] | string> {
  const relay = values.relay?.replace(/\/+$/, '')
  if (relay === undefined || !/^https?:\/\//.test(relay))
    throw new UsageError('--source needs --relay, the relay’s http(s) URL')
  const adminToken = values['admin-token'] ?? io.env['TRACKLET_ADMIN_TOKEN']
  if (adminToken === undefined || adminToken === '')
    throw new UsageError('--source needs --admin-token (or TRACKLET_ADMIN_TOKEN)')
  const limit = values.limit === undefined ? undefined : Number(values.limit)
  if (limit !== undefined && !Number.isInteger(limit)) throw new UsageError('--limit must be a whole number')
  let response: Awaited<ReturnType<typeof request>>
  try {
    response = await request(`${relay}/v1/functions/test`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ code, settings, source: values.source, ...(limit === undefined ? {} : { limit }) }),
    })
  } catch (error) {
    return `could not reach ${relay}: ${(error as Error).message}`
  }
  const answer = (await response.body.json().catch(() => undefined)) as
    | { results?: unknown[]; error?: { message?: string } }
    | undefined
  if (response.statusCode === 200 && Array.isArray(answer?.results)) return answer.results
  return `the relay answered ${response.statusCode}: ${answer?.error?.message ?? 'no JSON answer'}`
}

async function readText(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8')
  } catch (error) {
    throw new UsageError(`cannot read ${what} (${path}): ${(error as Error).message}`)
  }
}

async function readJson(path: string, what: string): Promise<unknown> {
  const text = await readText(path, what)
  try {
    return JSON.parse(text) as unknown
  } catch (error) {
    throw new UsageError(`${what} (${path}) is not JSON: ${(error as Error).message}`)
  }
}

function defaultIo(): FunctionIo {
  return { stdout: process.stdout, stderr: process.stderr, env: process.env }
}
