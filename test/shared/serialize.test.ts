import { describe, expect, it } from 'vitest'
import { serialize } from '../../src/shared/json'
import { toUtcTimestamp } from '../../src/shared/timestamp'
import { LIBRARY_VERSION } from '../../src/shared/version'
import packageJson from '../../package.json'

describe('serialize', () => {
  it('counts UTF-8 bytes, not characters', () => {
    const result = serialize({ s: 'é€😀' })
    expect(result).toEqual({ ok: true, json: '{"s":"é€😀"}', bytes: 8 + 2 + 3 + 4 })
  })

  it('reports cycles, BigInt and throwing toJSON instead of throwing', () => {
    const cycle: Record<string, unknown> = {}
    cycle['self'] = cycle
    expect(serialize(cycle)).toMatchObject({ ok: false, problem: expect.stringMatching(/circular/i) })
    expect(serialize({ n: 1n })).toMatchObject({ ok: false, problem: expect.stringMatching(/BigInt/) })
    const throwing = {
      toJSON: () => {
        throw new Error('boom')
      },
    }
    expect(serialize({ throwing })).toEqual({ ok: false, problem: 'cannot be serialised to JSON: boom' })
    expect(serialize(undefined)).toEqual({ ok: false, problem: 'cannot be serialised to JSON' })
  })
})

describe('toUtcTimestamp', () => {
  it('normalises Dates and zoned ISO strings to UTC with milliseconds', () => {
    expect(toUtcTimestamp(new Date(Date.UTC(2020, 0, 2, 3, 4, 5)))).toBe('2020-01-02T03:04:05.000Z')
    expect(toUtcTimestamp('2020-01-02T05:04:05+02:00')).toBe('2020-01-02T03:04:05.000Z')
    expect(toUtcTimestamp('2020-01-02T03:04:05.1Z')).toBe('2020-01-02T03:04:05.100Z')
  })

  it('refuses what does not name an instant', () => {
    expect(toUtcTimestamp('2020-01-02T03:04:05')).toBeUndefined()
    expect(toUtcTimestamp('2020-13-45T03:04:05Z')).toBeUndefined()
    // Days that do not exist are refused, not rolled over into the next month.
    expect(toUtcTimestamp('2026-02-30T00:00:00Z')).toBeUndefined()
    expect(toUtcTimestamp('2026-04-31T00:00:00Z')).toBeUndefined()
    expect(toUtcTimestamp('2026-01-01T24:00:00Z')).toBeUndefined()
    expect(toUtcTimestamp('2024-02-29T12:00:00Z')).toBe('2024-02-29T12:00:00.000Z')
    expect(toUtcTimestamp('2026-12-31T23:59:59.999+14:00')).toBe('2026-12-31T09:59:59.999Z')
    expect(toUtcTimestamp(new Date(Number.NaN))).toBeUndefined()
    expect(toUtcTimestamp(1234)).toBeUndefined()
  })
})

describe('LIBRARY_VERSION', () => {
  it('matches package.json, so context.library and User-Agent tell the truth', () => {
    expect(LIBRARY_VERSION).toBe(packageJson.version)
  })
})
