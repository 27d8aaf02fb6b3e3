import { type ConfigProblems, describeSafely, integer, pathOf, type Rule } from '../kit/rules'
import type { TargetLimits } from './destination'

/**
 * The bounds of a target's limits (docs/delivery-controls.md, "Settings"): what the settings
 * accept, and the one place the docs' options table is checked against.
 */
export const TARGET_LIMIT_BOUNDS = Object.freeze({
  /** Requests per second: more than 0, at most this. */
  maxRatePerSecond: 10_000,
  /** Requests in flight: an integer from 1 to this. */
  maxInFlight: 1000,
})

/** The keys of a target's limits, as its settings spell them. */
export const TARGET_LIMIT_KEYS = ['ratePerSecond', 'maxInFlight'] as const

const rate: Rule<number> = (value, field, problems) => {
  const most = TARGET_LIMIT_BOUNDS.maxRatePerSecond
  if (typeof value === 'number' && Number.isFinite(value) && value > 0 && value <= most) return value
  problems.add(field, `must be a number of requests per second above 0, at most ${most}, got ${describeSafely(value)}`)
  return undefined
}

const inFlight = integer(1, TARGET_LIMIT_BOUNDS.maxInFlight)

/**
 * The limits among `entry`'s keys (those of {@link TARGET_LIMIT_KEYS}), checked; each problem is
 * recorded with its path under `field`. `undefined` when the entry sets none.
 */
export function checkTargetLimits(
  entry: Readonly<Record<string, unknown>>,
  field: string,
  problems: ConfigProblems,
): TargetLimits | undefined {
  const limits: { ratePerSecond?: number; maxInFlight?: number } = {}
  if (entry['ratePerSecond'] !== undefined) {
    const checked = rate(entry['ratePerSecond'], pathOf(field, 'ratePerSecond'), problems)
    if (checked !== undefined) limits.ratePerSecond = checked
  }
  if (entry['maxInFlight'] !== undefined) {
    const checked = inFlight(entry['maxInFlight'], pathOf(field, 'maxInFlight'), problems)
    if (checked !== undefined) limits.maxInFlight = checked
  }
  return Object.keys(limits).length === 0 ? undefined : Object.freeze(limits)
}

/** `entry` without its limits' keys: what the destination itself is built from. */
export function withoutLimits<T extends object>(entry: T): T {
  const rest = { ...entry } as Record<string, unknown>
  for (const key of TARGET_LIMIT_KEYS) delete rest[key]
  return rest as T
}
