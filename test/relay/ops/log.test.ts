import { PassThrough } from 'node:stream'
import { afterEach, describe, expect, it } from 'vitest'
import { log, logFormatFrom, redactFromLog, writeLogTo } from '../../../src/relay/log'

const cleanups: (() => void)[] = []
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup()
})

function capture(format: 'text' | 'json'): () => string[] {
  const stream = new PassThrough()
  let text = ''
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()))
  cleanups.push(writeLogTo(stream, format))
  return () => text.split('\n').filter((line) => line !== '')
}

describe('the relay log', () => {
  it('writes one human-readable line per event, with its time and level', () => {
    const lines = capture('text')
    log('delivery %d of source %s delivered', 7, 'web')
    log('ERROR could not record %d outcomes: %s', 3, 'disk full')
    log('GET / failed: %s', new Error('boom').stack)
    const [delivered, failed, crashed] = lines()
    expect(lines()).toHaveLength(3)
    expect(delivered).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z info {2}delivery 7 of source web delivered$/)
    expect(failed).toMatch(/Z error could not record 3 outcomes: disk full$/)
    // A stack trace stays on its event's line.
    expect(crashed).toMatch(/Z info {2}GET \/ failed: Error: boom ⏎ at /)
  })

  it('writes one JSON object per line with LOG_FORMAT=json', () => {
    const lines = capture('json')
    log('WARN retention is slow')
    log('stack: %s', new Error('boom').stack)
    const events = lines().map((line) => JSON.parse(line))
    expect(events).toEqual([
      { time: expect.stringMatching(/Z$/), level: 'warn', msg: 'retention is slow' },
      { time: expect.any(String), level: 'info', msg: expect.stringMatching(/^stack: Error: boom\n {4}at /) },
    ])
  })

  it('cuts every URL to origin and path, and replaces the running relays’ secrets', () => {
    const lines = capture('text')
    const forget = redactFromLog(['wk-s3cret-key', 'ab', undefined])
    log('POST %s failed for %s (ab)', 'https://hooks.example.com/in?token=t0k3n#frag', 'wk-s3cret-key')
    log('lost postgres://tracklet:pw-s3cret@db:5432/tracklet')
    forget()
    log('after close: wk-s3cret-key')
    expect(lines()[0]).toMatch(/POST https:\/\/hooks\.example\.com\/in failed for \[redacted\] \(ab\)$/)
    expect(lines()[1]).toMatch(/lost postgres:\/\/db:5432\/tracklet$/)
    expect(lines()[2]).toMatch(/after close: wk-s3cret-key$/)
  })

  it('still feeds the debug logger when no line writer is installed (DEBUG=tracklet:relay)', () => {
    const saved = { enabled: log.enabled, writer: log.log }
    cleanups.push(() => {
      log.enabled = saved.enabled
      log.log = saved.writer
    })
    const seen: unknown[][] = []
    log.enabled = true
    log.log = (...args: unknown[]) => seen.push(args)
    log('relay %s', 'started')
    expect(seen).toHaveLength(1)
    expect(String(seen[0]![0])).toContain('tracklet:relay')
    expect(seen[0]).toContain('relay started')
    // A program with its own writer gets each line once, not again through debug.
    capture('text')
    log('relay %s', 'again')
    expect(seen).toHaveLength(1)
  })

  it('takes LOG_FORMAT text (the default) or json, and refuses anything else by name', () => {
    expect(logFormatFrom(undefined)).toBe('text')
    expect(logFormatFrom('')).toBe('text')
    expect(logFormatFrom('json')).toBe('json')
    expect(() => logFormatFrom('JSON ')).toThrow('LOG_FORMAT must be text or json, got "JSON "')
  })
})
