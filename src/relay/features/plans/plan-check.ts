import { compiledPlan, type SchemaCheck } from '../../config/plan-compiler'
import type { SourceTracking } from '../../config/plan'
import type { RoutedSource } from '../../config/sources'
import type { NewViolation, ViolationKind } from '../../store/violations'
import type { CheckFindings, IngestCheck, IngestVerdict } from '../../ingest/ingest-check'
import { type Finding, findingsOf, leftByRemoval, withoutPointers } from './plan-mend'

/** Why a message a tracking plan blocks writes no delivery: the live stream's `filtered` reason. */
export const PLAN_BLOCKED = {
  unplanned: 'blocked by the source’s tracking plan: the event is not planned',
  violation: 'blocked by the source’s tracking plan: it breaks the plan’s schema',
}

/**
 * The ingest check of tracking plans (docs/plans.md): each `track`, `identify` and `group`
 * message of a source with a plan is checked against its schema (compiled once per plan); what it
 * breaks is found for ingest to record (with the message's deliveries), and the source's actions decide whether it goes on as sent,
 * without the offending values (`omit`) or not at all (`block`). A source without a plan, and
 * every other call type, pass at the cost of one property read.
 */
export function planCheck(now: () => Date = () => new Date()): IngestCheck {
  return (message, source) => {
    const tracking = source.tracking
    if (tracking === undefined) return undefined
    const type = message['type']
    if (type === 'track') return checkTrack(message, source, tracking, now)
    if (type === 'identify' || type === 'group') {
      const schema = compiledPlan(tracking.plan)[type]
      return schema === undefined ? undefined : checkField(message, source, tracking, schema, 'traits', now)
    }
    return undefined
  }
}

function checkTrack(
  message: Readonly<Record<string, unknown>>,
  source: RoutedSource,
  tracking: SourceTracking,
  now: () => Date,
): IngestVerdict {
  const event = message['event'] as string
  const schema = compiledPlan(tracking.plan).events.get(event)
  if (schema !== undefined) return checkField(message, source, tracking, schema, 'properties', now)
  // Not planned: a violation whatever `unplanned` says; `allow` only lets it through.
  const violation = violationOf(
    message,
    source,
    now().toISOString(),
    'unplanned',
    '/event',
    `event ${JSON.stringify(event)} is not in the tracking plan`,
  )
  const findings: CheckFindings = { violations: [violation] }
  if (tracking.unplanned === 'block') findings.blocked = PLAN_BLOCKED.unplanned
  return findings
}

function checkField(
  message: Readonly<Record<string, unknown>>,
  source: RoutedSource,
  tracking: SourceTracking,
  schema: SchemaCheck,
  field: 'properties' | 'traits',
  now: () => Date,
): IngestVerdict {
  // Left out, the field is an empty object: a plan requiring a property still finds it missing.
  const value = message[field] ?? {}
  if (schema(value)) return undefined
  const found = findingsOf(schema.errors ?? [])
  // One time for all the message's violations: found at once.
  const at = now().toISOString()
  const recorded = (list: readonly Finding[]) =>
    list.map((f) => violationOf(message, source, at, f.kind, `/${field}${f.pointer}`, f.message))
  const findings: CheckFindings = { violations: recorded(found) }
  if (tracking.violations === 'block') findings.blocked = PLAN_BLOCKED.violation
  else if (tracking.violations === 'omit') {
    // What cannot be mended (a missing required property) goes on unchanged, recorded.
    const removable = found.filter((f) => f.removable).map((f) => f.pointer)
    if (removable.length > 0) {
      const mended = withoutPointers(value, removable)
      findings.message = { ...message, [field]: mended }
      // A required property taken out for its value (a wrong type) is now missing: recorded too.
      findings.violations = [...findings.violations, ...recorded(leftByRemoval(schema, mended, found))]
    }
  }
  return findings
}

function violationOf(
  message: Readonly<Record<string, unknown>>,
  source: RoutedSource,
  at: string,
  kind: ViolationKind,
  path: string,
  text: string,
): NewViolation {
  const type = message['type'] as string
  const violation: NewViolation = {
    at,
    source: source.name,
    messageId: message['messageId'] as string,
    type,
    kind,
    path,
    message: text,
  }
  if (type === 'track') violation.event = message['event'] as string
  const userId = message['userId']
  if (typeof userId === 'string') violation.userId = userId
  return violation
}
