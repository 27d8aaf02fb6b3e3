import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import {
  FUNCTION_ERROR_BYTES,
  FUNCTION_LOG_BYTES,
  FUNCTION_LOG_LINES,
  FUNCTION_REPLY_CHARS,
} from '../../../src/relay/config/function-limits'
import { cappedErrorText, cappedLogs, cutToBytes } from '../../../src/relay/features/functions/result'
import { FunctionSandbox, type FunctionSpec } from '../../../src/relay/features/functions/sandbox'
import { MAX_MESSAGE_BYTES } from '../../../src/shared/limits'

// Every cap of a call holds whatever the function's code does: its memory (functionMemory, typed
// arrays included), its console, its error's text and the event it returns, each enforced by the
// relay outside the sandbox (docs/functions.md, "Limits").

const event = { type: 'track', event: 'Signed Up', userId: 'u1', messageId: 'm1', properties: {} }

async function run(code: string, spec: Partial<FunctionSpec> = {}) {
  // A timeout a loaded machine's scheduling cannot run into, unless the test gives its own.
  const sandbox = await FunctionSandbox.start({ code, filename: 'limits.js', timeoutMs: 30_000, ...spec })
  try {
    return await sandbox.call(event)
  } finally {
    await sandbox.close()
  }
}

const bytes = (lines: readonly string[]) => lines.reduce((sum, line) => sum + Buffer.byteLength(line), 0)

describe('functionMemory', () => {
  it('holds for typed arrays, whose allocations QuickJS counts one at a time', async () => {
    const result = await run('function onTrack() { const keep = []; for (;;) keep.push(new Uint8Array(1e6)) }', {
      memoryMb: 16,
      timeoutMs: 60_000,
    })
    expect(result).toMatchObject({ kind: 'error', code: 'ERR_FUNCTION_MEMORY' })
  })

  it('ends a growing array of arrays with ERR_FUNCTION_MEMORY, not at functionTimeout', async () => {
    const result = await run('function onTrack() { const a = []; for (;;) a.push([1, 2, 3, 4, 5, 6, 7, 8]) }', {
      timeoutMs: 120_000,
    })
    expect(result).toMatchObject({ kind: 'error', code: 'ERR_FUNCTION_MEMORY' })
  })
})

describe('the caps of a call, kept outside the sandbox', () => {
  it('keeps the console caps when the code replaces JSON.stringify', async () => {
    const result = await run(`const original = JSON.stringify
      JSON.stringify = (value, ...rest) => {
        if (value && Array.isArray(value.logs)) { value.logs = Array.from({ length: 5000 }, (_, i) => 'line ' + i); value.logsTruncated = false }
        return original(value, ...rest)
      }
      function onTrack(e) { for (let i = 0; i < 5000; i++) console.log('x'.repeat(200)); return e }`)
    expect(result.logs.length).toBeLessThanOrEqual(FUNCTION_LOG_LINES)
    expect(bytes(result.logs)).toBeLessThanOrEqual(FUNCTION_LOG_BYTES)
    expect(result.logsTruncated).toBe(true)
  })

  it(`cuts a line over the cap to ${FUNCTION_LOG_BYTES} bytes rather than dropping it`, async () => {
    const result = await run("function onTrack(e) { console.log('x'.repeat(10000)); return e }")
    expect(result.logs).toEqual(['x'.repeat(FUNCTION_LOG_BYTES)])
    expect(result.logsTruncated).toBe(true)
  })

  it(`keeps ${FUNCTION_ERROR_BYTES} bytes of a thrown error's text`, async () => {
    const result = await run("function onTrack() { throw new Error('e'.repeat(5000000)) }", { timeoutMs: 30_000 })
    expect(result.kind).toBe('error')
    const { message, stack } = result as { message: string; stack?: string }
    expect(message).toMatch(new RegExp(`^e{${FUNCTION_ERROR_BYTES}}… \\(\\d+ more (bytes|characters) cut\\)$`))
    expect(Buffer.byteLength(stack ?? '')).toBeLessThan(FUNCTION_ERROR_BYTES + 100)
    const retry = await run("function onTrack() { throw new RetryError('r'.repeat(100000)) }")
    expect((retry as { message: string }).message.length).toBeLessThan(FUNCTION_ERROR_BYTES + 100)
  })

  it(`refuses an event over ${MAX_MESSAGE_BYTES} bytes, as ingest would, and never reads a huge one`, async () => {
    const over = await run(
      `function onTrack(e) { return { ...e, properties: { big: 'x'.repeat(${MAX_MESSAGE_BYTES}) } } }`,
    )
    expect(over).toMatchObject({ kind: 'error', message: expect.stringContaining(`(${MAX_MESSAGE_BYTES})`) })
    const huge = await run("function onTrack(e) { return { ...e, properties: { big: 'x'.repeat(15000000) } } }", {
      timeoutMs: 30_000,
    })
    expect(huge).toMatchObject({
      kind: 'error',
      message: expect.stringContaining(`(${FUNCTION_REPLY_CHARS} characters`),
    })
    const fits = await run("function onTrack(e) { return { ...e, properties: { text: 'x'.repeat(30000) } } }")
    expect(fits.kind).toBe('event')
  })
})

describe('the caps, as functions', () => {
  it('cut console lines at the line count and at the byte cap, inside the line that crosses it', () => {
    expect(cappedLogs(['a', 'b'], false)).toEqual({ logs: ['a', 'b'], logsTruncated: false })
    const many = cappedLogs(
      Array.from({ length: 50 }, () => 'x'),
      false,
    )
    expect(many.logs).toHaveLength(FUNCTION_LOG_LINES)
    expect(many.logsTruncated).toBe(true)
    const cut = cappedLogs(['é'.repeat(3000), 'next'], false)
    expect(cut.logs).toEqual(['é'.repeat(FUNCTION_LOG_BYTES / 2)])
    expect(cut.logsTruncated).toBe(true)
    expect(cappedLogs('not a list', false)).toEqual({ logs: [], logsTruncated: false })
  })

  it('never cuts a character in two', () => {
    expect(cutToBytes('😀😀', 6)).toBe('😀')
    expect(cutToBytes('aé', 2)).toBe('a')
    expect(cappedErrorText('short')).toBe('short')
  })
})

describe('docs/functions.md, "Limits, and where they are kept"', () => {
  it('says the limits the code keeps', () => {
    const docs = readFileSync(new URL('../../../docs/functions.md', import.meta.url), 'utf8')
    const table = docs.slice(docs.indexOf('### Limits, and where they are kept'))
    const rows = table.split('\n').filter((line) => line.startsWith('| '))
    const limits = rows.slice(2).map((row) => row.split(' | ')[0]!.slice(2))
    expect(limits).toEqual([
      '`functionMemory` (MB, default 64)',
      '`functionTimeout` (ms, default 1,000)',
      `${FUNCTION_LOG_LINES} lines, ${FUNCTION_LOG_BYTES / 1024} KB`,
      `${FUNCTION_ERROR_BYTES / 1024} KB`,
      `${MAX_MESSAGE_BYTES.toLocaleString('en-US')} bytes`,
      `${FUNCTION_REPLY_CHARS / 1024} K characters`,
    ])
  })
})
