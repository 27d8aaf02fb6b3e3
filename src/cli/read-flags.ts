import { parseArgs } from 'node:util'
import { normalizeFlags } from './flag-spellings'

/** A command's flags as read: each flag's value (a string, `true`, or absent). */
export type FlagValues = Record<string, string | boolean | undefined>

/** A flag a command takes: a string or a switch, given once (no command takes a flag many times). */
type FlagOptions = Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: false }>

/**
 * Reads a command's `args` by its `options`: each flag in either spelling (`--admin-token`,
 * `--adminToken`, see `flag-spellings.ts`), strictly (an unknown flag, a stray argument or a
 * missing value is a problem); or the first problem, as one line naming the flag.
 */
export function readFlags(args: readonly string[], options: FlagOptions): { values: FlagValues } | { problem: string } {
  const spelt = normalizeFlags(args, options)
  if ('problem' in spelt) return spelt
  try {
    // No flag is `multiple`, so no value is an array.
    const { values } = parseArgs({ args: spelt.args, options, strict: true, allowPositionals: false })
    return { values: values as FlagValues }
  } catch (error) {
    return { problem: (error as Error).message }
  }
}

/** Whether `value` is an absolute http(s) URL, as every URL flag must be. */
export function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value)
    return protocol === 'http:' || protocol === 'https:'
  } catch {
    return false
  }
}
