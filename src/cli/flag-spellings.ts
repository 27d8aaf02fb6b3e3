import type { ParseArgsConfig } from 'node:util'
import { didYouMean } from '../shared/nearest-name'

type Options = NonNullable<ParseArgsConfig['options']>

/** `writeKey` → `write-key`: the other spelling every camelCase flag takes. */
export function kebabCase(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)
}

/**
 * `args` with every kebab-case spelling of a camelCase flag (`--write-key`, `--user-id=42`)
 * written as the flag itself, ready for `parseArgs`; or, for the first flag that is neither, a
 * one-line problem naming it and the nearest known flag. Only the flag's name is ever quoted,
 * never a value given with it (`--writekey=KEY` names `--writekey`).
 */
export function normalizeFlags(args: readonly string[], options: Options): { args: string[] } | { problem: string } {
  const spellings = new Map<string, string>()
  for (const name of Object.keys(options)) {
    spellings.set(name, name)
    spellings.set(kebabCase(name), name)
  }
  const shorts = new Set(Object.values(options).flatMap((option) => (option.short === undefined ? [] : [option.short])))
  const normalized: string[] = []
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!
    if (arg === '--') {
      normalized.push(...args.slice(index))
      break
    }
    if (/^-[^-]/.test(arg)) {
      if (!shorts.has(arg.slice(1, 2)) && !/^-\d/.test(arg)) return { problem: `unknown flag ${arg.slice(0, 2)}` }
      normalized.push(arg)
      continue
    }
    if (!arg.startsWith('--')) {
      normalized.push(arg)
      continue
    }
    const [given = '', ...value] = arg.slice(2).split('=')
    const name = spellings.get(given)
    if (name === undefined)
      return {
        problem: `unknown flag --${given}${didYouMean(
          `--${given}`,
          [...spellings.keys()].map((known) => `--${known}`),
        )}`,
      }
    normalized.push(value.length > 0 ? `--${name}=${value.join('=')}` : `--${name}`)
    // A string flag's value may follow as the next argument, whatever it starts with.
    if (value.length === 0 && options[name]!.type === 'string' && index + 1 < args.length) {
      normalized.push(args[++index]!)
    }
  }
  return { args: normalized }
}
