import { PLAN_DEFAULTS } from './defaults'
import type { SourceSchema } from './options'
import type { SourceTracking } from './plan'

/** A source's plan with its actions, as its routed view carries it; nothing without a plan. */
export function trackingOf(schema: SourceSchema | undefined): { tracking?: SourceTracking } {
  if (schema?.plan === undefined) return {}
  return {
    tracking: {
      plan: schema.plan,
      unplanned: schema.unplanned ?? PLAN_DEFAULTS.unplanned,
      violations: schema.violations ?? PLAN_DEFAULTS.violations,
    },
  }
}
