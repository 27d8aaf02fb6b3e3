import type { ViolationStore } from '../../store/violations'
import type { Feature } from '../feature'
import { planCheck } from './plan-check'

/** What tracking plans need from the relay. */
export interface PlansDeps {
  /** Where the violations found are recorded. */
  violations: ViolationStore
}

/**
 * Tracking plans (docs/plans.md): each message of a source with a plan checked at ingest against
 * its schema, what it breaks recorded, and the source's actions applied (`omit`, `block`). The
 * plans themselves are options, checked in `config/plan*.ts`.
 */
export function plansFeature(deps: PlansDeps): Feature {
  return { name: 'plans', ingestCheck: planCheck(deps.violations) }
}
