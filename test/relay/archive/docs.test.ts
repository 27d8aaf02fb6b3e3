import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { archive } from '../../../src/relay/destinations/archive/index'
import { ARCHIVE_DEFAULTS, ARCHIVE_LIMITS } from '../../../src/relay/destinations/archive/settings'

const DOC = readFileSync(new URL('../../../docs/archive.md', import.meta.url), 'utf8')

/** The settings table of docs/archive.md: setting → its default and meaning, as written. */
function settingsTable(): Map<string, { value: string; meaning: string }> {
  const rows = DOC.split('## Settings')[1]!.split('\n\n')[1]!.split('\n').slice(2)
  return new Map(
    rows.map((row) => {
      const [name, value, meaning] = row.split(' | ').map((cell) => cell.replace(/^\| |`/g, ''))
      return [name!, { value: value!, meaning: meaning! }]
    }),
  )
}

describe('docs/archive.md', () => {
  it("states the settings' defaults and bounds as the code has them", () => {
    const table = settingsTable()
    for (const [name, value] of Object.entries(ARCHIVE_DEFAULTS)) {
      expect(table.get(name)?.value, name).toBe(JSON.stringify(value))
    }
    for (const [name, { min, max }] of Object.entries(ARCHIVE_LIMITS)) {
      expect(table.get(name)?.meaning, name).toContain(`(${min} to ${max.toLocaleString('en-US')})`)
    }
  })

  it('lists the series the archive declares, each with its type', () => {
    const table = DOC.split('## Metrics and the endpoints view')[1]!.split('\n\n')[2]!.split('\n').slice(2)
    const rows = table.map((row) => row.split('|').map((cell) => cell.trim().replace(/`/g, '')))
    const declared = [
      ...(archive.metrics ?? []).map((metric) => [metric.name, 'counter']),
      [archive.lagMetric!.name, 'gauge'],
    ]
    expect(rows.map((cells) => [cells[1], cells[2]])).toEqual(declared)
  })
})
