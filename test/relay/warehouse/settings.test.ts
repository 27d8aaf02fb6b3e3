import { describe, expect, it } from 'vitest'
import { RelayConfigError } from '../../../src/relay/errors'
import {
  parseWarehouseSettings,
  WAREHOUSE_DEFAULTS,
  warehouseSecrets,
  warehouseTarget,
} from '../../../src/relay/destinations/warehouse/settings'

const PATH = 'sources[0].destinations.Warehouse'

function problemsOf(raw: unknown): { field: string; message: string }[] {
  try {
    parseWarehouseSettings(raw, PATH)
  } catch (error) {
    expect(error).toBeInstanceOf(RelayConfigError)
    return [...(error as RelayConfigError).problems]
  }
  throw new Error('no error')
}

describe('Warehouse settings', () => {
  it('fills in the defaults', () => {
    expect(parseWarehouseSettings({ url: 'postgres://wh/analytics' }, PATH)).toEqual({
      url: 'postgres://wh/analytics',
      ...WAREHOUSE_DEFAULTS,
    })
  })

  it('lists every problem with its path, never showing the URL', () => {
    const problems = problemsOf({
      url: 'mysql://loader:hunter2-secret@wh/x',
      schema: 'Web Site',
      loadEvery: -1,
      maxBatch: 0,
      lodEvery: 5,
    })
    expect(problems.map((problem) => problem.field)).toEqual([
      `${PATH}.url`,
      `${PATH}.schema`,
      `${PATH}.loadEvery`,
      `${PATH}.maxBatch`,
      `${PATH}.lodEvery`,
    ])
    expect(JSON.stringify(problems)).not.toContain('hunter2')
    expect(problems[4]!.message).toContain('did you mean `loadEvery`')
    expect(problemsOf({})).toEqual([{ field: `${PATH}.url`, message: 'is required' }])
    expect(problemsOf('postgres://x/y')[0]!.field).toBe(PATH)
  })

  it('names the password as its secret and shows the warehouse without it', () => {
    const settings = parseWarehouseSettings({ url: 'postgres://loader:p%40ss@wh:6432/analytics', schema: 'web' }, PATH)
    expect(warehouseSecrets(settings)).toEqual(['p%40ss', 'p@ss'])
    expect(warehouseTarget(settings, 'ignored')).toBe('postgres://wh:6432/analytics?schema=web')
    const bySource = parseWarehouseSettings({ url: 'postgresql://wh/analytics' }, PATH)
    expect(warehouseSecrets(bySource)).toEqual([])
    expect(warehouseTarget(bySource, 'My App')).toBe('postgres://wh:5432/analytics?schema=my_app')
  })
})
