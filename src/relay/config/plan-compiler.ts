import type { default as Ajv, ErrorObject, Options as AjvOptions, ValidateFunction } from 'ajv'
import type { RegExpEngine } from 'ajv/dist/types'
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

/**
 * What the patterns of one schema (`pattern`, `patternProperties`) may cost together, in RE2
 * instructions: a string is matched in time proportional to its length times its pattern's
 * instructions, so with a message under 32,000 bytes this bounds what any message can cost
 * (docs/plans.md). `^[a-z]+@[a-z.]+$` is 12; `^[a-z]{1,1000}$` is 2,003 (`maxLength` says that).
 */
export const PATTERN_INSTRUCTIONS_PER_SCHEMA = 400

type AjvClass = new (options: AjvOptions) => Ajv
interface Re2Pattern {
  test(input: string): boolean
  re2(): { prog: { numInst(): number } }
}
interface Re2Module {
  RE2JS: { compile(pattern: string): Re2Pattern; translateRegExp(pattern: string): string }
}
let loaded: { Ajv: AjvClass; addFormats: (ajv: Ajv) => unknown; re2: Re2Module } | undefined

// Synchronous, so a plan is checked where every other setting is (validateRelayOptions, which is
// synchronous: at start, `--check`, a reload, an API write), yet loaded only when a plan exists.
function ajvModule(): NonNullable<typeof loaded> {
  if (loaded !== undefined) return loaded
  const ajv = requirePeer<{ default: AjvClass }>(RELAY_PEERS.plans, 'ajv')
  const formats = requirePeer<{ default: (ajv: Ajv) => unknown }>(RELAY_PEERS.plans, 'ajv-formats')
  const re2 = requirePeer<Re2Module>(RELAY_PEERS.plans, 're2js')
  loaded = { Ajv: ajv.default, addFormats: formats.default, re2 }
  return loaded
}

/** A `pattern` the relay will not run: RE2 cannot express it, or it costs too much. */
class PatternRefused extends Error {}

/**
 * ajv's `code.regExp`: every pattern of a plan runs on RE2 (re2js, linear time), never on V8's
 * backtracking RegExp, so no message can make a pattern stall the event loop. `cost` counts the
 * instructions of each use of a pattern in one schema against its budget.
 */
function linearEngine(re2: Re2Module, cost: { used: number }): RegExpEngine {
  const engine = (pattern: string): { test(input: string): boolean; toString(): string } => {
    let compiled: Re2Pattern
    try {
      compiled = re2.RE2JS.compile(re2.RE2JS.translateRegExp(pattern))
    } catch (error) {
      throw new PatternRefused(
        `has a pattern ${JSON.stringify(pattern)} the relay cannot run in linear time ` +
          `(lookarounds and backreferences are not supported): ${(error as Error).message}`,
      )
    }
    cost.used += compiled.re2().prog.numInst()
    if (cost.used > PATTERN_INSTRUCTIONS_PER_SCHEMA) {
      throw new PatternRefused(
        `has patterns that cost too much: with ${JSON.stringify(pattern)} they come to ` +
          `${cost.used} RE2 instructions, more than ${PATTERN_INSTRUCTIONS_PER_SCHEMA} per schema ` +
          '(use maxLength for a length rather than a counted repeat such as {1,1000})',
      )
    }
    // ajv keys its compiled patterns by toString(): each pattern must have its own.
    return { test: (input) => compiled.test(input), toString: () => `/${pattern}/` }
  }
  // Only standalone code (which the relay never generates) would print this name.
  return Object.assign(engine, { code: 'linearRegExp' })
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
  const { Ajv, addFormats, re2 } = ajvModule()
  const cost = { used: 0 }
  // One validator per plan: `$id`s of one plan never clash with another's.
  const ajv = new Ajv({ ...AJV_OPTIONS, code: { regExp: linearEngine(re2, cost) } })
  addFormats(ajv)
  const compile = (schema: JsonSchema, path: string): SchemaCheck | undefined => {
    cost.used = 0
    try {
      return ajv.compile(schema)
    } catch (error) {
      const message = (error as Error).message
      problems.push({
        path,
        message: error instanceof PatternRefused ? message : `is not a valid JSON Schema (draft-07): ${message}`,
      })
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
