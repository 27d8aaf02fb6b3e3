import { PassThrough, Writable } from 'node:stream'
import { afterEach, describe, expect, it } from 'vitest'
import { log, logFormatFrom, logLevelFrom, plural, redactFromLog, useLogLevel } from '../../src/relay/log'
import { MAX_BUFFERED_LOG_BYTES, writeLogTo } from '../../src/relay/log-sink'
import { validateRelayOptions } from '../../src/relay/config/validate'

const cleanups: (() => unknown)[] = []
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

function atLevel(level: Parameters<typeof useLogLevel>[0]): void {
  cleanups.push(useLogLevel(level))
}

describe('the relay log', () => {
  it('writes one human-readable line per event, with its time and level', () => {
    const lines = capture('text')
    log.info('delivery 7 of source web delivered')
    log.error('could not record 3 outcomes: disk full')
    log.warn(`GET / failed: ${new Error('boom').stack}`)
    const [delivered, failed, crashed] = lines()
    expect(lines()).toHaveLength(3)
    expect(delivered).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z info {2}delivery 7 of source web delivered$/)
    expect(failed).toMatch(/Z error could not record 3 outcomes: disk full$/)
    // A stack trace stays on its event's line.
    expect(crashed).toMatch(/Z warn {2}GET \/ failed: Error: boom ⏎ at /)
  })

  it('writes one JSON object per line with LOG_FORMAT=json, with the event’s fields beside time, level and msg', () => {
    const lines = capture('json')
    log.warn('circuit of https://hooks.example.com/in?token=t0k3n opened', {
      event: 'circuit-opened',
      url: 'https://hooks.example.com/in?token=t0k3n',
      status: 503,
      attempt: 2,
      ms: 12,
    })
    log.info(`stack: ${new Error('boom').stack}`)
    const events = lines().map((line) => JSON.parse(line))
    expect(events).toEqual([
      {
        time: expect.stringMatching(/Z$/),
        level: 'warn',
        msg: 'circuit of https://hooks.example.com/in opened',
        event: 'circuit-opened',
        url: 'https://hooks.example.com/in',
        status: 503,
        attempt: 2,
        ms: 12,
      },
      { time: expect.any(String), level: 'info', msg: expect.stringMatching(/^stack: Error: boom\n {4}at /) },
    ])
  })

  it('writes the levels up to the threshold: info by default, debug only when asked', () => {
    const lines = capture('text')
    log.debug('one line per message')
    log.info('started')
    expect(lines()).toEqual([expect.stringContaining('info  started')])
    atLevel('debug')
    log.debug('one line per message')
    expect(lines()[1]).toContain('debug one line per message')
    cleanups.pop()!()
    atLevel('error')
    log.warn('a warning')
    log.error('an error')
    expect(lines().slice(2)).toEqual([expect.stringContaining('error an error')])
  })

  it('with several relays in one process, writes at the most verbose level any of them asked for', () => {
    const lines = capture('text')
    const quiet = useLogLevel('error')
    const verbose = useLogLevel('debug')
    log.debug('seen')
    verbose()
    log.debug('not seen')
    log.error('seen too')
    quiet()
    expect(lines()).toEqual([expect.stringContaining('seen'), expect.stringContaining('seen too')])
    expect(log.isLevelEnabled('debug')).toBe(false)
  })

  it('cuts every URL to origin and path, and replaces the running relays’ secrets, in the message and the fields', () => {
    const lines = capture('json')
    const forget = redactFromLog(['wk-s3cret-key', 'ab', undefined])
    log.info('POST https://hooks.example.com/in?token=t0k3n#frag failed for wk-s3cret-key (ab)', {
      source: 'wk-s3cret-key',
    })
    log.info('lost postgres://tracklet:pw-s3cret@db:5432/tracklet')
    forget()
    log.info('after close: wk-s3cret-key')
    const [first, second, third] = lines().map((line) => JSON.parse(line))
    expect(first.msg).toBe('POST https://hooks.example.com/in failed for [redacted] (ab)')
    expect(first.source).toBe('[redacted]')
    expect(second.msg).toBe('lost postgres://db:5432/tracklet')
    expect(third.msg).toBe('after close: wk-s3cret-key')
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
    log.info('relay started')
    expect(seen).toHaveLength(1)
    expect(String(seen[0]![0])).toContain('tracklet:relay')
    expect(seen[0]).toContain('relay started')
    // A program with its own writer gets each line once, not again through debug.
    capture('text')
    log.info('relay again')
    expect(seen).toHaveLength(1)
  })

  it('drops lines while the stream holds a megabyte unwritten, and then says how many it dropped', () => {
    const chunks: string[] = []
    let release: (() => void) | undefined
    // A reader that takes the first chunk and then stalls until released.
    const stalled = new Writable({
      highWaterMark: 16,
      write(chunk: Buffer, _encoding, done) {
        chunks.push(chunk.toString())
        release = done
      },
    })
    cleanups.push(writeLogTo(stalled, 'text'))
    const line = 'x'.repeat(1000)
    const written = Math.ceil(MAX_BUFFERED_LOG_BYTES / 1000) + 2
    for (let i = 0; i < written + 50; i++) log.info(line)
    expect(stalled.writableLength).toBeLessThan(MAX_BUFFERED_LOG_BYTES + 2 * 1100)
    // Drain, then one more line: the count of dropped lines comes first.
    while (release !== undefined) {
      const done = release
      release = undefined
      done()
    }
    log.info('after')
    // What the reader took, then what the stream still holds.
    const held = (stalled as unknown as { writableBuffer: { chunk: Buffer }[] }).writableBuffer
    const all = [...chunks, ...held.map((b) => String(b.chunk))].join('')
    expect(all).toMatch(/warn {2}\d+ log lines dropped: the log's reader fell behind\n.*info {2}after\n$/)
  })

  it('takes LOG_FORMAT text (the default) or json, and refuses anything else by name', () => {
    expect(logFormatFrom(undefined)).toBe('text')
    expect(logFormatFrom('')).toBe('text')
    expect(logFormatFrom('json')).toBe('json')
    expect(() => logFormatFrom('JSON ')).toThrow('LOG_FORMAT must be text or json, got "JSON "')
  })

  it('takes LOG_LEVEL error, warn, info (the default) or debug, and refuses anything else by name', () => {
    expect(logLevelFrom(undefined)).toBe('info')
    expect(logLevelFrom('')).toBe('info')
    expect(logLevelFrom('debug')).toBe('debug')
    expect(() => logLevelFrom('verbose')).toThrow('LOG_LEVEL must be one of error, warn, info, debug, got "verbose"')
  })

  it('the logLevel option beats LOG_LEVEL, which beats the default', () => {
    const sources = [{ name: 'web', writeKey: 'k' }]
    const saved = process.env['LOG_LEVEL']
    cleanups.push(() => {
      if (saved === undefined) delete process.env['LOG_LEVEL']
      else process.env['LOG_LEVEL'] = saved
    })
    delete process.env['LOG_LEVEL']
    expect(validateRelayOptions({ sources }).logLevel).toBe('info')
    process.env['LOG_LEVEL'] = 'debug'
    expect(validateRelayOptions({ sources }).logLevel).toBe('debug')
    expect(validateRelayOptions({ sources, logLevel: 'warn' }).logLevel).toBe('warn')
    expect(() => validateRelayOptions({ sources, logLevel: 'loud' })).toThrow(
      'logLevel: must be one of error, warn, info, debug, got "loud"',
    )
  })

  it('counts in words: 1 delivery, 2 deliveries', () => {
    expect(plural(1, 'delivery', 'deliveries')).toBe('1 delivery')
    expect(plural(2, 'delivery', 'deliveries')).toBe('2 deliveries')
    expect(plural(0, 'source')).toBe('0 sources')
  })
})
