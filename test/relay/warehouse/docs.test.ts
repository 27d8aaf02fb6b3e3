import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { DDL_LOCK_TIMEOUT_MS } from '../../../src/relay/destinations/warehouse/postgres/catalog'
import { identifierOf, MAX_IDENTIFIER_BYTES } from '../../../src/relay/destinations/warehouse/schema/names'
import { standardColumnsOf } from '../../../src/relay/destinations/warehouse/schema/rows'
import { SQL_TYPES } from '../../../src/relay/destinations/warehouse/postgres/sql'
import {
  parseWarehouseSettings,
  WAREHOUSE_DEFAULTS,
  WAREHOUSE_LIMITS,
} from '../../../src/relay/destinations/warehouse/settings'

// docs/warehouse.md's tables tied to the code: a setting, a default, a bound or a standard column
// changed without the docs following fails here.

const doc = readFileSync(new URL('../../../docs/warehouse.md', import.meta.url), 'utf8')

/** The rows of the first table after `marker`, as arrays of cells. */
function tableAfter(marker: string): string[][] {
  const lines = doc.slice(doc.indexOf(marker)).split('\n')
  const first = lines.findIndex((line) => line.startsWith('|'))
  const end = lines.findIndex((line, index) => index > first && !line.startsWith('|'))
  return lines.slice(first + 2, end).map((line) =>
    line
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim()),
  )
}

const code = (cell: string) => /`([^`]+)`/.exec(cell)?.[1]

describe('docs/warehouse.md', () => {
  const settings = new Map(tableAfter('## Settings').map(([name = '', ...rest]) => [code(name)!, rest]))

  it('lists every setting the warehouse takes, and no other', () => {
    expect([...settings.keys()].sort()).toEqual(['loadEvery', 'maxBatch', 'schema', 'url'])
    // Each listed setting is one the settings accept.
    const raw = { url: 'postgres://h/d', schema: 'web', loadEvery: 1, maxBatch: 1 }
    expect(() => parseWarehouseSettings(raw, 'W')).not.toThrow()
  })

  it.each(Object.entries(WAREHOUSE_DEFAULTS))('gives %s its default (%s) and its bounds', (name, value) => {
    const [documented = '', meaning = ''] = settings.get(name)!
    expect(Number(code(documented))).toBe(value)
    const limits = WAREHOUSE_LIMITS[name as keyof typeof WAREHOUSE_LIMITS]
    expect(meaning).toContain(`from \`${limits.min}\` to \`${limits.max}\``)
  })

  it('lists the standard columns every table has, with their types', () => {
    const columns = tableAfter('Every table has these columns').map(([name = '', type = '']) => [
      code(name),
      code(type),
    ])
    const expected = standardColumnsOf('identifies').map((column) => [
      column.name,
      column.type === 'other' ? 'text' : SQL_TYPES[column.type],
    ])
    expect(columns).toEqual(expected)
  })

  it('shows names as the rule makes them', () => {
    const examples: [string, string][] = [
      ['orderTotal', 'order_total'],
      ['Order Completed!', 'order_completed'],
      ['1st', '_1st'],
    ]
    for (const [given, made] of examples) {
      expect(doc).toContain(`\`${given}\` → \`${made}\``)
      expect(identifierOf(given)).toBe(made)
    }
    expect(doc).toContain(`at most ${MAX_IDENTIFIER_BYTES} bytes`)
    expect(doc).toContain(`waits at most ${DDL_LOCK_TIMEOUT_MS / 1000} s for a reader`)
  })
})
