import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { DEFAULT_SEND_TIMEOUT, ENDPOINT_ENV, SEND_USAGE, WRITE_KEY_ENV } from '../../src/cli/send-args'
import { DEFAULT_OPTIONS, OPTION_ALIASES, OPTION_NAMES } from '../../src/sdk/options'

// docs/sdk.md restates the client's options and `tracklet send`'s flags: these tie its tables to
// the code, so neither can change without the other.
const doc = readFileSync(new URL('../../docs/sdk.md', import.meta.url), 'utf8')

/** The rows of the first table after `heading`, as cells. */
function table(heading: string): string[][] {
  const section = doc.slice(doc.indexOf(heading))
  const lines = section.split('\n')
  const start = lines.findIndex((line) => line.startsWith('|'))
  const rows: string[][] = []
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break
    rows.push(
      line
        .split(/(?<!\\)\|/)
        .slice(1, -1)
        .map((cell) => cell.trim()),
    )
  }
  return rows
}

const names = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1]!)

describe('docs/sdk.md', () => {
  it("lists every option the client takes, with its aliases and the code's defaults", () => {
    const rows = table('## Options')
    const documented = rows.flatMap(([option]) => names(option!))
    expect([...documented].sort()).toEqual([...OPTION_NAMES].sort())
    for (const [option, aliases] of Object.entries(OPTION_ALIASES)) {
      const row = rows.find(([cell]) => names(cell!)[0] === option)
      expect(names(row![0]!).slice(1)).toEqual([...aliases])
    }
    for (const [option, value] of Object.entries(DEFAULT_OPTIONS)) {
      const row = rows.find(([cell]) => names(cell!)[0] === option)
      expect(names(row![1]!)[0], option).toBe(String(value))
    }
  })

  it('lists every flag of tracklet send, with the defaults --help gives', () => {
    const rows = table('## Command line: `tracklet send`')
    const documented = rows.flatMap(([flags]) => names(flags!))
    const helped = [...SEND_USAGE.matchAll(/^ {2}(?:-h, )?(--[a-zA-Z]+)/gm)].map((match) => match[1]!)
    expect(new Set(documented)).toEqual(new Set(helped.filter((flag) => flag !== '--help')))
    const cell = (flag: string) => rows.find(([flags]) => names(flags!).includes(flag))![2]!
    expect(cell('--timeout')).toContain(`\`${DEFAULT_SEND_TIMEOUT}\``)
    expect(cell('--endpoint')).toContain(`\`${ENDPOINT_ENV}\`, else \`${DEFAULT_OPTIONS.endpoint}\``)
    expect(cell('--writeKey')).toContain(`\`${WRITE_KEY_ENV}\``)
    expect(SEND_USAGE).toContain(`default: ${DEFAULT_SEND_TIMEOUT}`)
  })
})
