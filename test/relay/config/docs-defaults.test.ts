import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { RELAY_HELP } from '../../../src/cli/help'
import { BREAKER_DEFAULTS, RELAY_DEFAULTS } from '../../../src/relay/config/defaults'
import { RELAY_OPTION_NAMES } from '../../../src/relay/config/validate'
import { DEFAULT_LOG_LEVEL } from '../../../src/relay/log'

// docs/relay.md's options table and the flags table of `tracklet relay`, tied to the code: an
// option added, removed or given another default without the docs following fails here.

const relayDoc = readFileSync(new URL('../../../docs/relay.md', import.meta.url), 'utf8')

/** The rows of the first table under `heading`, as { first cell: second cell }. */
function tableUnder(heading: string): Map<string, string> {
  const lines = relayDoc.slice(relayDoc.indexOf(`\n${heading}\n`)).split('\n')
  const first = lines.findIndex((line) => line.startsWith('|'))
  const end = lines.findIndex((line, index) => index > first && !line.startsWith('|'))
  const table = lines.slice(first, end)
  return new Map(
    table.slice(2).map((line) => {
      const [name = '', value = ''] = line
        .split(/(?<!\\)\|/)
        .slice(1, -1)
        .map((cell) => cell.trim())
      return [name.replace(/^`|`$/g, ''), value]
    }),
  )
}

// `8787`, `'127.0.0.1'`, `30000` ms, `{ failureThreshold: 5, … }`: the value in the first code span.
function documentedValue(cell: string): unknown {
  const code = /`([^`]+)`/.exec(cell)?.[1]
  if (code === undefined) return cell
  if (code.startsWith('{')) return Function(`"use strict"; return (${code})`)()
  if (/^'.*'$/.test(code)) return code.slice(1, -1)
  if (code === 'true' || code === 'false') return code === 'true'
  return Number(code)
}

describe('docs/relay.md', () => {
  const options = tableUnder('## Options')

  it('lists every option the relay takes, and no other', () => {
    expect([...options.keys()].sort()).toEqual([...RELAY_OPTION_NAMES].sort())
  })

  it.each(Object.entries(RELAY_DEFAULTS))('gives %s the default the code applies (%s)', (name, value) => {
    expect(documentedValue(options.get(name) ?? '')).toEqual(value)
  })

  it('gives the breaker its defaults, and says the rest are required or unset', () => {
    expect(documentedValue(options.get('breaker') ?? '')).toEqual(BREAKER_DEFAULTS)
    expect(documentedValue(options.get('logLevel') ?? '')).toBe(DEFAULT_LOG_LEVEL)
    expect(options.get('sources')).toBe('required')
    expect(options.get('adminToken')).toBe('none')
    expect(options.get('metricsToken')).toBe('none')
  })

  it('documents every flag of `tracklet relay --help`, and the database precedence of both', () => {
    const flags = [...tableUnder('## From the command line').keys()]
    // A flag line of the help: two spaces, the flag and its argument, then two or more spaces.
    const helpFlags = [...RELAY_HELP.matchAll(/^ {2}(-\S.*?) {2,}/gm)].map((match) => match[1])
    expect(flags.map((flag) => flag.replace('\\|', '|')).sort()).toEqual(
      helpFlags.filter((flag) => flag !== '-h, --help').sort(),
    )
    expect(relayDoc).toContain("`--database`, else the config's `database`, else the `DATABASE_URL`")
    expect(RELAY_HELP).toContain("Database precedence: --database, then the config's `database`, then $DATABASE_URL")
  })
})
