import { readFile } from 'node:fs/promises'
import { stderr, stdout } from 'node:process'
import { type ParseArgsConfig, parseArgs } from 'node:util'
import { request } from 'undici'
import type { TrackingPlan } from '../relay/config/plan'
import { planRule } from '../relay/config/plan-rules'
import { ConfigProblems } from '../relay/kit/rules'
import { isPlainObject } from '../shared/validate'
import { normalizeFlags } from './flag-spellings'
import { eventsModule } from './plan-types'

/** `tracklet typegen --help`. */
export const TYPEGEN_USAGE = `usage: tracklet typegen --config FILE --source NAME
       tracklet typegen --relay URL --admin-token T --source NAME

Prints (to stdout) a TypeScript module exporting one type, Events: each event of the source's
tracking plan with the type of its properties, for the SDK's Analytics<Events>. A call that breaks
the plan then does not compile (docs/plans.md).

Flags:
  --config FILE         the relay's JSON config file to read the source's plan from
  --relay URL           or a running relay's base URL (reads GET /v1/sources/:name)
  --admin-token T       the relay's admin token (with --relay; or $TRACKLET_ADMIN_TOKEN)
  --source NAME         the source whose plan to read (required)
  -h, --help            show this help and exit

Exit codes: 0 printed, 1 the plan could not be read, 2 bad arguments.`

const OPTIONS = {
  config: { type: 'string' },
  relay: { type: 'string' },
  'admin-token': { type: 'string' },
  source: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options']

/** Where `tracklet typegen` reads the plan from. */
export type TypegenArgs =
  | { from: 'config'; config: string; source: string }
  | { from: 'relay'; relay: string; adminToken: string; source: string }

/** `tracklet typegen`'s arguments, help, or what is wrong with them as one line. */
export function parseTypegenArgs(
  args: readonly string[],
  env: Record<string, string | undefined> = process.env,
): TypegenArgs | { help: true } | { problem: string } {
  const spelt = normalizeFlags(args, OPTIONS)
  if ('problem' in spelt) return spelt
  let values: Record<string, string | boolean | undefined>
  try {
    values = parseArgs({ args: spelt.args, options: OPTIONS, strict: true }).values
  } catch (error) {
    return { problem: (error as Error).message }
  }
  if (values['help'] === true) return { help: true }
  const source = values['source']
  if (typeof source !== 'string' || source === '') return { problem: '--source NAME is required' }
  const { config, relay } = values
  if ((config === undefined) === (relay === undefined)) return { problem: 'give either --config FILE or --relay URL' }
  if (typeof config === 'string') return { from: 'config', config, source }
  if (typeof relay !== 'string' || !/^https?:\/\/[^/]/.test(relay))
    return { problem: '--relay must be the relay’s http(s) URL' }
  const adminToken = (values['admin-token'] as string | undefined) ?? env['TRACKLET_ADMIN_TOKEN']
  if (adminToken === undefined || adminToken === '')
    return { problem: '--admin-token T is required with --relay (or set $TRACKLET_ADMIN_TOKEN)' }
  return { from: 'relay', relay: relay.replace(/\/+$/, ''), adminToken, source }
}

/** `tracklet typegen`: prints the source's event map, or says why it cannot. */
export async function runTypegen(args: readonly string[]): Promise<number> {
  const parsed = parseTypegenArgs(args)
  if ('help' in parsed) {
    stdout.write(`${TYPEGEN_USAGE}\n`)
    return 0
  }
  if ('problem' in parsed) {
    stderr.write(`tracklet typegen: ${parsed.problem}\n\n${TYPEGEN_USAGE}\n`)
    return 2
  }
  try {
    const schema = parsed.from === 'config' ? await schemaFromFile(parsed) : await schemaFromRelay(parsed)
    stdout.write(eventsModule(planOf(schema, parsed.source), parsed.source))
    return 0
  } catch (error) {
    stderr.write(`tracklet typegen: ${(error as Error).message}\n`)
    return 1
  }
}

// The source's `schema` as the config file gives it. Only the plan is read: the rest of the file
// (write keys, `${NAME}` references to secrets) need not be set where types are generated.
async function schemaFromFile({ config, source }: { config: string; source: string }): Promise<unknown> {
  let parsed: unknown
  try {
    parsed = JSON.parse(await readFile(config, 'utf8'))
  } catch (error) {
    throw new Error(`cannot read ${config} as JSON: ${(error as Error).message}`)
  }
  const sources = isPlainObject(parsed) && Array.isArray(parsed['sources']) ? parsed['sources'] : []
  const found = sources.find((s: unknown) => isPlainObject(s) && s['name'] === source) as
    | Record<string, unknown>
    | undefined
  if (found === undefined) throw new Error(`${config} has no source named ${JSON.stringify(source)}`)
  return found['schema']
}

// The source's `schema` as a running relay answers it (GET /v1/sources/:name).
async function schemaFromRelay({ relay, adminToken, source }: { relay: string; adminToken: string; source: string }) {
  const url = `${relay}/v1/sources/${encodeURIComponent(source)}`
  const response = await request(url, { headers: { authorization: `Bearer ${adminToken}` } })
  const text = await response.body.text()
  if (response.statusCode === 404) throw new Error(`the relay has no source named ${JSON.stringify(source)}`)
  if (response.statusCode !== 200) {
    const reason = (JSON.parse(text || '{}') as { error?: { message?: string } }).error?.message
    throw new Error(`the relay answered ${response.statusCode} to GET /v1/sources/…${reason ? `: ${reason}` : ''}`)
  }
  return (JSON.parse(text) as Record<string, unknown>)['schema']
}

// The plan, checked as the relay checks it (a schema that would not compile is refused here too).
function planOf(schema: unknown, source: string): TrackingPlan {
  const plan = isPlainObject(schema) ? schema['plan'] : undefined
  if (plan === undefined) throw new Error(`source ${JSON.stringify(source)} has no tracking plan (schema.plan)`)
  const problems = new ConfigProblems()
  const checked = planRule(plan, 'schema.plan', problems)
  if (checked === undefined)
    throw new Error(problems.list.map((problem) => `${problem.field}: ${problem.message}`).join('\n'))
  return checked
}
