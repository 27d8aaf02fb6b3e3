import { describe, expect, it } from 'vitest'
import {
  datesOf,
  escapeSegment,
  fileKey,
  hourInWindow,
  hourOf,
  parseKey,
  temporaryName,
} from '../../../src/relay/destinations/archive/layout'

describe('the archive layout', () => {
  it('files a message under its UTC hour of receipt', () => {
    expect(hourOf('2026-03-01T23:59:59.999-01:00')).toEqual({ date: '2026-03-02', hour: '00' })
    const key = fileKey('raw', 'web', hourOf('2026-03-01T07:15:00Z'), {
      relay: 'r1',
      first: 10,
      last: 42,
      format: 'ndjson',
    })
    expect(key).toBe('raw/source=web/date=2026-03-01/hour=07/r1-10-42.ndjson.gz')
    expect(
      fileKey('', 'web', { date: '2026-03-01', hour: '07' }, { relay: 'r', first: 1, last: 1, format: 'parquet' }),
    ).toBe('source=web/date=2026-03-01/hour=07/r-1-1.parquet')
  })

  it('keeps a hostile source name to one folder, and reads it back', () => {
    for (const source of ['a/b', 'x=y', '../up', '.hidden', 'nl\nline', 'ü 2028\u2028', '%41']) {
      const segment = escapeSegment(source)
      expect(segment).toMatch(/^[A-Za-z0-9_%-][A-Za-z0-9_.%-]*$/)
      const key = fileKey(
        'p',
        source,
        { date: '2026-01-01', hour: '00' },
        {
          relay: 'relay-1/x',
          first: 1,
          last: 2,
          format: 'ndjson',
        },
      )
      expect(parseKey(key)).toMatchObject({ source, relay: 'relay-1/x', first: 1, last: 2, format: 'ndjson' })
    }
  })

  it('hides a file being written from every reader', () => {
    const name = temporaryName('r-1-2.ndjson.gz', 'abc')
    expect(name.startsWith('.')).toBe(true)
    expect(name.endsWith('.ndjson.gz')).toBe(false)
    expect(parseKey(`source=web/date=2026-01-01/hour=00/${name}`)).toBeUndefined()
  })

  it('finds the days and hours of a window', () => {
    const since = Date.parse('2026-02-27T22:30:00Z')
    const until = Date.parse('2026-03-01T00:10:00Z')
    expect(datesOf(since, until)).toEqual(['2026-02-27', '2026-02-28', '2026-03-01'])
    expect(hourInWindow({ date: '2026-02-27', hour: '22' }, since, until)).toBe(true)
    expect(hourInWindow({ date: '2026-02-27', hour: '21' }, since, until)).toBe(false)
    expect(hourInWindow({ date: '2026-03-01', hour: '00' }, since, until)).toBe(true)
    expect(hourInWindow({ date: '2026-03-01', hour: '01' }, since, until)).toBe(false)
  })
})
