import type { default as Ajv, ErrorObject, Options as AjvOptions, ValidateFunction } from 'ajv'
import type { JsonSchema, TrackingPlan } from './plan'
import { RELAY_PEERS, requirePeer } from '../peers'

// Compiles tracking plans with ajv (JSON Schema draft-07), loaded the first time a plan is
// compiled: a relay without a plan never loads it, and the SDK never imports this module.
// docs/plans.md says what a plan checks.

/** A compiled schema: validates a value and keeps the errors of the last call. */
export type SchemaCheck = ValidateFunction
export type SchemaError = ErrorObject

/** A plan's schemas, compiled: the one each planned event, `identify` and `group` are checked by. */
export interface CompiledPlan {
  events: ReadonlyMap<string, SchemaCheck>
  identify: SchemaCheck | undefined
  group: SchemaCheck | undefined
}

/** A schema of a plan that does not compile, with its path under the plan (`events["Signed Up"].properties`). */
export interface PlanSchemaProblem {
  path: string
  message: string
}

// ajv's options, the same for every plan. `allErrors`: `omit` must find every offending property,
// not the first. Strict schemas: a misspelt keyword (`"tpye"`) would otherwise check nothing,
// silently, so it is a config error; `$data` off (a schema reading the message's own values is not
// a plan); nothing is coerced, defaulted or removed by the validator itself (what `omit` removes
// is the relay's decision). Warnings (strictTypes, strictTuples) are off: no console output.
const AJV_OPTIONS: AjvOptions = {
  allErrors: true,
  strictSchema: true,
  strictNumbers: true,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
  $data: false,
  coerceTypes: false,
  useDefaults: false,
  removeAdditional: false,
  logger: false,
}

type AjvClass = new (options: AjvOptions) => Ajv
let loaded: { Ajv: AjvClass; addFormats: (ajv: Ajv) => unknown } | undefined

// Synchronous, so a plan is checked where every other setting is (validateRelayOptions, which is
// synchronous: at start, `--check`, a reload, an API write), yet loaded only when a plan exists.
function ajvModule(): NonNullable<typeof loaded> {
  if (loaded !== undefined) return loaded
  const ajv = requirePeer<{ default: AjvClass }>(RELAY_PEERS.plans, 'ajv')
  const formats = requirePeer<{ default: (ajv: Ajv) => unknown }>(RELAY_PEERS.plans, 'ajv-formats')
  loaded = { Ajv: ajv.default, addFormats: formats.default }
  return loaded
}

// Each plan object (as validated: a copy no caller can change) compiled once. A config change
// (a reload, an API write) brings a new object, compiled anew; the old one is collected.
const compiled = new WeakMap<TrackingPlan, CompiledPlan>()
let compilations = 0

/** How many plans this process has compiled (each schema of a plan once): for tests. */
export function planCompilations(): number {
  return compilations
}

/**
 * The plan's compiled schemas: compiled on the first call for this plan object, then the same.
 *
 * @throws {PlanCompileError} listing every schema that does not compile.
 */
export function compiledPlan(plan: TrackingPlan): CompiledPlan {
  const known = compiled.get(plan)
  if (known !== undefined) return known
  const problems: PlanSchemaProblem[] = []
  const { Ajv, addFormats } = ajvModule()
  // One validator per plan: `$id`s of one plan never clash with another's.
  const ajv = new Ajv(AJV_OPTIONS)
  addFormats(ajv)
  const compile = (schema: JsonSchema, path: string): SchemaCheck | undefined => {
    try {
      return ajv.compile(schema)
    } catch (error) {
      problems.push({ path, message: `is not a valid JSON Schema (draft-07): ${(error as Error).message}` })
      return undefined
    }
  }
  const events = new Map<string, SchemaCheck>()
  for (const [name, { properties }] of Object.entries(plan.events)) {
    const check = compile(properties, `events[${JSON.stringify(name)}].properties`)
    if (check !== undefined) events.set(name, check)
  }
  const identify = plan.identify === undefined ? undefined : compile(plan.identify.traits, 'identify.traits')
  const group = plan.group === undefined ? undefined : compile(plan.group.traits, 'group.traits')
  compilations++
  if (problems.length > 0) throw new PlanCompileError(problems)
  const result = { events, identify, group }
  compiled.set(plan, result)
  return result
}

/** A plan with schemas that do not compile. */
export class PlanCompileError extends Error {
  readonly problems: readonly PlanSchemaProblem[]

  constructor(problems: readonly PlanSchemaProblem[]) {
    super(problems.map((p) => `${p.path}: ${p.message}`).join('; '))
    this.name = 'PlanCompileError'
    this.problems = problems
  }
}
