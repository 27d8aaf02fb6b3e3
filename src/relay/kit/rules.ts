import { didYouMean } from '../../shared/nearest-name'
import { describe, isNonEmptyString, isPlainObject } from '../../shared/validate'
import type { RelayConfigProblem } from '../errors'

/**
 * The problems found in a config so far. Validation records each one and goes on, so that every
 * problem of a file is reported at once rather than one per attempt to start.
 */
export class ConfigProblems {
  /** Every problem recorded, in the order found. */
  readonly list: RelayConfigProblem[] = []
  /** The error behind a problem, where one was caught (a WebhookConfigError): the thrown error's `cause`. */
  readonly #causes = new Map<RelayConfigProblem, unknown>()

  add(field: string, message: string, cause?: unknown): void {
    const problem = { field, message }
    this.list.push(problem)
    if (cause !== undefined) this.#causes.set(problem, cause)
  }

  /** The error caught behind `problem`, if any. */
  causeOf(problem: RelayConfigProblem): unknown {
    return this.#causes.get(problem)
  }
}

/**
 * Checks one field's value, which is present (not `undefined`): returns it (copied where it is an
 * object), or records a problem at `field` and returns `undefined`.
 */
export type Rule<T> = (value: unknown, field: string, problems: ConfigProblems) => T | undefined

/** Rules for every key of an object type: the one place its known keys come from. */
export type RulesOf<T> = { [K in keyof T]-?: Rule<NonNullable<T[K]>> }

/** `parent.key`, or `key` at the top. */
export function pathOf(parent: string, key: string): string {
  return parent === '' ? key : `${parent}.${key}`
}

/**
 * A short description of a value for an error message: a string is only called `a string`,
 * since a secret put in the wrong place (a token as `port`) must not be printed either.
 */
export function describeSafely(value: unknown): string {
  return typeof value === 'string' ? 'a string' : describe(value)
}

/**
 * An object whose keys are those of `rules` (any other key is a problem naming the nearest known
 * one: a misspelt key would otherwise be ignored, silently). Returns the valid fields; `what`
 * names the kind of key in messages (`a relay option`, `a breaker option`).
 */
export function objectOf<T>(rules: RulesOf<T>, what: string): Rule<Partial<T>> {
  const known = Object.keys(rules)
  return (value, field, problems) => {
    if (!isPlainObject(value)) {
      problems.add(field || 'options', `must be an object, got ${describeSafely(value)}`)
      return undefined
    }
    const result: Partial<T> = {}
    for (const [key, item] of Object.entries(value)) {
      const path = pathOf(field, key)
      if (!known.includes(key)) {
        problems.add(path, `is not ${what} (known: ${known.join(', ')})${didYouMean(key, known)}`)
        continue
      }
      if (item === undefined) continue
      const rule = rules[key as keyof T] as Rule<unknown>
      const checked = rule(item, path, problems)
      if (checked !== undefined) result[key as keyof T] = checked as T[keyof T]
    }
    return result
  }
}

/** An integer from `min` to `max`. */
export function integer(min: number, max: number): Rule<number> {
  return (value, field, problems) => {
    if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) return value
    problems.add(field, `must be an integer from ${min} to ${max}, got ${describeSafely(value)}`)
    return undefined
  }
}

/** `true` or `false`. */
export const flag: Rule<boolean> = (value, field, problems) => {
  if (typeof value === 'boolean') return value
  problems.add(field, `must be true or false, got ${describeSafely(value)}`)
  return undefined
}

/** A non-empty string that is not secret (a host, a name): shown in messages as given. */
export const text: Rule<string> = (value, field, problems) => {
  if (isNonEmptyString(value)) return value
  problems.add(field, `must be a non-empty string, got ${describe(value)}`)
  return undefined
}

/** A non-empty string that is a secret: messages say its type, never its value. */
export const secret: Rule<string> = (value, field, problems) => {
  if (isNonEmptyString(value)) return value
  problems.add(field, `must be a non-empty string, got ${typeof value}`)
  return undefined
}

/** One of `values` (names, not secrets: a wrong one is shown as given). */
export function oneOf<T extends string>(values: readonly T[]): Rule<T> {
  return (value, field, problems) => {
    if ((values as readonly unknown[]).includes(value)) return value as T
    problems.add(field, `must be one of ${values.join(', ')}, got ${describe(value)}`)
    return undefined
  }
}

/** An array whose items each pass `item`; `what` says what the array holds, for its message. */
export function listOf<T>(item: Rule<T>, what: string): Rule<T[]> {
  return (value, field, problems) => {
    if (!Array.isArray(value)) {
      problems.add(field, `must be an array of ${what}, got ${describeSafely(value)}`)
      return undefined
    }
    const items: T[] = []
    value.forEach((entry: unknown, index) => {
      const checked = item(entry, `${field}[${index}]`, problems)
      if (checked !== undefined) items.push(checked)
    })
    return items.length === value.length ? items : undefined
  }
}
