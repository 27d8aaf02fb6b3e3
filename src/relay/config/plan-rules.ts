import { isPlainObject } from '../../shared/validate'
import { compiledPlan, PlanCompileError } from './plan-compiler'
import { PLAN_DEFAULTS } from './defaults'
import type { SourceSchema } from './options'
import type { JsonSchema, TrackingPlan } from './plan'
import { UNPLANNED_ACTIONS, VIOLATION_ACTIONS } from './plan'
import { type ConfigProblems, describeSafely, objectOf, oneOf, type Rule } from '../kit/rules'

// The rules of `sources[].schema.plan`, `.unplanned` and `.violations` (docs/plans.md).
// A plan is checked whole: its shape, then every schema compiled, each problem at its own path.

/** `schema.unplanned`: `allow` or `block`. */
export const unplannedRule = oneOf(UNPLANNED_ACTIONS)

/** `schema.violations`: `allow`, `omit` or `block`. */
export const violationsRule = oneOf(VIOLATION_ACTIONS)

const schemaRule: Rule<JsonSchema> = (value, field, problems) => {
  if (typeof value === 'boolean' || isPlainObject(value)) return value as JsonSchema
  problems.add(field, `must be a JSON Schema (an object, or true / false), got ${describeSafely(value)}`)
  return undefined
}

const eventRule = required(objectOf<{ properties: JsonSchema }>({ properties: schemaRule }, 'an event setting'), [
  'properties',
])
const traitsRule = required(objectOf<{ traits: JsonSchema }>({ traits: schemaRule }, 'a traits setting'), ['traits'])

const eventsRule: Rule<TrackingPlan['events']> = (value, field, problems) => {
  if (!isPlainObject(value)) {
    problems.add(field, `must be an object of event names to { properties: JSON Schema }, got ${describeSafely(value)}`)
    return undefined
  }
  const events: Record<string, { properties: JsonSchema }> = {}
  let valid = true
  for (const [name, item] of Object.entries(value)) {
    const path = `${field}[${JSON.stringify(name)}]`
    if (name.length === 0) {
      problems.add(path, 'an event name must be a non-empty string')
      valid = false
      continue
    }
    const event = eventRule(item, path, problems)
    if (event === undefined) valid = false
    else events[name] = event
  }
  return valid ? events : undefined
}

const planShape = required(
  objectOf<TrackingPlan>({ events: eventsRule, identify: traitsRule, group: traitsRule }, 'a plan setting'),
  ['events'],
)

/**
 * `schema.plan`: its shape, then each schema compiled (JSON Schema draft-07, strict). Returns a
 * copy of the plan (later changes to the caller's objects never reach the relay), compiled: the
 * copy is what ingest checks messages by, so it is never compiled again.
 */
export const planRule: Rule<TrackingPlan> = (value, field, problems) => {
  const before = problems.list.length
  const shaped = planShape(value, field, problems)
  if (shaped === undefined || problems.list.length > before) return undefined
  const plan = structuredClone(shaped) as TrackingPlan
  try {
    compiledPlan(plan)
  } catch (error) {
    if (!(error instanceof PlanCompileError)) throw error
    for (const problem of error.problems) problems.add(`${field}.${problem.path}`, problem.message)
    return undefined
  }
  return plan
}

// An object rule whose `keys` must be given.
function required<T>(rule: Rule<Partial<T>>, keys: readonly (keyof T & string)[]): Rule<T> {
  return (value, field, problems: ConfigProblems) => {
    const checked = rule(value, field, problems)
    if (checked === undefined) return undefined
    let complete = true
    for (const key of keys) {
      if (isPlainObject(value) && value[key] === undefined) {
        problems.add(`${field}.${key}`, 'is required')
        complete = false
      }
    }
    return complete ? (checked as T) : undefined
  }
}

/**
 * A source's schema as validated, with its plan's actions resolved (`PLAN_DEFAULTS`). An action
 * given without a plan would change nothing: it is a problem, not ignored.
 */
export function schemaOf(schema: SourceSchema, field: string, problems: ConfigProblems): SourceSchema {
  const { blockedEvents = [], plan, unplanned, violations } = schema
  // A plan given but refused has its own problems already.
  const planRefused = problems.list.some((problem) => problem.field.startsWith(`${field}.plan`))
  if (plan === undefined) {
    if (planRefused) return { blockedEvents }
    if (unplanned !== undefined)
      problems.add(`${field}.unplanned`, 'is set but there is no plan (schema.plan) to apply it')
    if (violations !== undefined)
      problems.add(`${field}.violations`, 'is set but there is no plan (schema.plan) to apply it')
    return { blockedEvents }
  }
  return {
    blockedEvents,
    plan,
    unplanned: unplanned ?? PLAN_DEFAULTS.unplanned,
    violations: violations ?? PLAN_DEFAULTS.violations,
  }
}
