import { isNonEmptyString, isPlainObject } from '../../shared/validate'
import { type ConfigProblems, describeSafely, integer } from '../kit/rules'

/** Where a destination's function comes from: a file (relative to the config file's folder) or inline code. */
export type FunctionSource = { file: string } | { code: string }

/** A destination's function and its settings (docs/functions.md). */
export interface DestinationFunction {
  /** The code run at each delivery attempt, before the message is formatted. */
  function?: FunctionSource
  /** The function's `settings` argument: any JSON object. @default {} */
  functionSettings?: Record<string, unknown>
}

/** The keys of a destination's settings that belong to its function, not to the destination. */
export const FUNCTION_KEYS = ['function', 'functionSettings'] as const

/** `functionTimeout`'s range, ms: past a minute a call holds its deliveries for too long. */
export const functionTimeoutRule = integer(10, 60_000)

/** `functionMemory`'s range, MB. */
export const functionMemoryRule = integer(4, 1024)

/**
 * Checks the function keys of destination settings at `field` and returns them copied; records
 * each problem. Whether the code compiles is checked when the relay starts (it needs the sandbox).
 */
export function checkDestinationFunction(
  value: Record<string, unknown>,
  field: string,
  problems: ConfigProblems,
): DestinationFunction {
  const result: DestinationFunction = {}
  const source = value['function']
  if (source !== undefined) {
    const keys = isPlainObject(source) ? Object.keys(source) : []
    const file = isPlainObject(source) ? source['file'] : undefined
    const code = isPlainObject(source) ? source['code'] : undefined
    if (keys.length === 1 && isNonEmptyString(file)) result.function = { file }
    else if (keys.length === 1 && isNonEmptyString(code)) result.function = { code }
    else {
      problems.add(
        `${field}.function`,
        `must be { "file": "path/to/function.js" } or { "code": "…" } (one of them, a non-empty string), got ${describeSafely(source)}${
          keys.length > 0 ? ` with keys ${keys.join(', ')}` : ''
        }`,
      )
    }
  }
  const settings = value['functionSettings']
  if (settings !== undefined) {
    if (isPlainObject(settings)) result.functionSettings = structuredClone(settings)
    else problems.add(`${field}.functionSettings`, `must be an object, got ${describeSafely(settings)}`)
    if (source === undefined) problems.add(`${field}.functionSettings`, 'is set but there is no function to receive it')
  }
  return result
}

/** `settings` without the function's keys: what the destination itself is built from. */
export function withoutFunction<T extends object>(settings: T): Omit<T, keyof DestinationFunction> {
  const rest = { ...settings } as Record<string, unknown>
  for (const key of FUNCTION_KEYS) delete rest[key]
  return rest as Omit<T, keyof DestinationFunction>
}
