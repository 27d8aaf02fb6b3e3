/**
 * A JSON Schema (draft-07): an object of keywords, or `true` / `false`. Checked when the config is
 * read: a schema the validator cannot compile is a config error naming its path.
 */
export type JsonSchema = { readonly [keyword: string]: unknown } | boolean

/**
 * A source's tracking plan (docs/plans.md): the schema of each planned track event's
 * `properties`, and optionally of `identify`'s and `group`'s `traits`. Other call types are never
 * checked.
 */
export interface TrackingPlan {
  /** Each planned track event, by its exact, case-sensitive name. */
  events: { readonly [name: string]: { properties: JsonSchema } }
  /** The schema of every `identify` call's `traits`; unchecked when absent. */
  identify?: { traits: JsonSchema }
  /** The schema of every `group` call's `traits`; unchecked when absent. */
  group?: { traits: JsonSchema }
}

/** What becomes of a track event the plan does not list: let through (`allow`) or dropped (`block`). */
export const UNPLANNED_ACTIONS = ['allow', 'block'] as const
export type UnplannedAction = (typeof UNPLANNED_ACTIONS)[number]

/**
 * What becomes of a message that breaks its schema: let through as sent (`allow`), let through
 * without the offending properties or traits (`omit`), or dropped (`block`).
 */
export const VIOLATION_ACTIONS = ['allow', 'omit', 'block'] as const
export type ViolationAction = (typeof VIOLATION_ACTIONS)[number]

/** A source's plan with its actions resolved: what ingest checks a source's messages against. */
export interface SourceTracking {
  plan: TrackingPlan
  unplanned: UnplannedAction
  violations: ViolationAction
}
