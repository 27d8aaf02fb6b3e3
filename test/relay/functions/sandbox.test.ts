import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FUNCTION_LOG_BYTES, FUNCTION_LOG_LINES } from '../../../src/relay/config/function-limits'
import { FunctionCompileError, FunctionSandbox } from '../../../src/relay/features/functions/sandbox'

const event = {
  type: 'track',
  event: 'Signed Up',
  userId: 'u1',
  messageId: 'm1',
  properties: { email: 'Ada@Example.com' },
}

async function run(code: string, input: Record<string, unknown> = event, settings: Record<string, unknown> = {}) {
  // No call here tests the timeout: one a loaded machine's scheduling cannot run into.
  const sandbox = await FunctionSandbox.start({ code, filename: 'test.js', settings, timeoutMs: 30_000 })
  try {
    return await sandbox.call(input)
  } finally {
    await sandbox.close()
  }
}

describe('the sandbox walls', () => {
  const SECRET = 'TRACKLET_FUNCTION_TEST_SECRET'
  afterAll(() => {
    delete process.env[SECRET]
  })

  const NAMES = [
    'require',
    'process',
    'module',
    'exports',
    'globalThis.process',
    'setTimeout',
    'setInterval',
    'setImmediate',
    'queueMicrotask',
    'fetch',
    'XMLHttpRequest',
    'WebSocket',
    'Deno',
    'Bun',
    'std',
    'os',
    'Buffer',
    '__hostSha256',
    '__hostUrl',
  ]
  // One sandbox looks up every name (each `typeof` in a function of its own, so that one name's
  // lookup cannot hide another's): starting a sandbox per name was most of this file's time.
  let found: Record<string, unknown>
  beforeAll(async () => {
    process.env[SECRET] = 'hunter2'
    const lookups = NAMES.map((name) => `${JSON.stringify(name)}: (() => typeof ${name})()`).join(', ')
    const result = await run(`function onTrack(e) { e.found = { ${lookups} }; return e }`)
    if (result.kind !== 'event') throw new Error(`the lookups ended with ${result.kind}`)
    found = result.event['found'] as Record<string, unknown>
  })

  it.each(NAMES)('has no %s', (name) => {
    expect(found[name]).toBe('undefined')
  })

  it('cannot import a module, statically or dynamically', async () => {
    const dynamic = await run("async function onTrack(e) { await import('node:fs'); return e }")
    expect(dynamic.kind).toBe('error')
    const compile = await FunctionSandbox.start({ code: "import fs from 'node:fs'", filename: 'imports.js' }).catch(
      (e) => e,
    )
    expect(compile).toBeInstanceOf(FunctionCompileError)
  })

  it("cannot read the relay's environment, however it looks", async () => {
    const result = await run(
      `function onTrack(e) {
        const seen = []
        for (const name of Object.getOwnPropertyNames(globalThis)) seen.push(name)
        e.leak = JSON.stringify(seen) + String(globalThis.env) + String(typeof process === 'object' && process.env)
        return e
      }`,
    )
    expect(result.kind).toBe('event')
    expect(JSON.stringify(result)).not.toContain('hunter2')
    expect(JSON.stringify(result)).not.toContain(SECRET)
  })
})

describe('what a function is given', () => {
  it('hashes with sha256 and hmacSha256 (lower-case hex)', async () => {
    const result = await run(
      "function onTrack(e, s) { e.properties.email = sha256(e.properties.email.toLowerCase()); e.mac = hmacSha256(s.key, 'abc'); return e }",
      event,
      { key: 'k' },
    )
    const { createHash, createHmac } = await import('node:crypto')
    if (result.kind !== 'event') throw new Error('no event')
    expect((result.event['properties'] as Record<string, string>)['email']).toBe(
      createHash('sha256').update('ada@example.com').digest('hex'),
    )
    expect(result.event['mac']).toBe(createHmac('sha256', 'k').update('abc').digest('hex'))
  })

  it('has URL and URLSearchParams that parse as Node does and follow changes to the query', async () => {
    const result = await run(
      `function onPage(e) {
        const url = new URL(e.properties.url)
        url.searchParams.delete('email')
        e.properties.url = url.toString()
        e.properties.host = url.hostname
        e.properties.q = new URLSearchParams({ a: '1 2', b: 'x&y' }).toString()
        e.properties.bad = URL.canParse('not a url')
        return e
      }`,
      { type: 'page', messageId: 'm', properties: { url: 'https://shop.example/cart?email=a%40b.c&item=7#top' } },
    )
    expect(result).toMatchObject({
      kind: 'event',
      event: {
        properties: {
          url: 'https://shop.example/cart?item=7#top',
          host: 'shop.example',
          q: 'a=1+2&b=x%26y',
          bad: false,
        },
      },
    })
  })

  it('has TextEncoder and TextDecoder (UTF-8, round trip)', async () => {
    const result = await run(
      "function onTrack(e) { const bytes = new TextEncoder().encode('héllo € 😀'); e.n = bytes.length; e.back = new TextDecoder().decode(bytes); return e }",
    )
    expect(result).toMatchObject({ kind: 'event', event: { n: Buffer.byteLength('héllo € 😀'), back: 'héllo € 😀' } })
  })

  it('runs the per-type handler before transformEvent, awaits an async one, and passes a type with no handler', async () => {
    const code = `
      async function onTrack(e) { await null; e.by = 'onTrack'; return e }
      function transformEvent(e) { e.by = 'transformEvent'; return e }`
    expect(await run(code)).toMatchObject({ kind: 'event', event: { by: 'onTrack' } })
    expect(await run(code, { type: 'identify', messageId: 'm' })).toMatchObject({
      kind: 'event',
      event: { by: 'transformEvent' },
    })
    expect(await run('function onTrack(e) { return e }', { type: 'group', messageId: 'm' })).toMatchObject({
      kind: 'pass',
    })
  })

  it('maps each way a call can end', async () => {
    expect(await run('function onTrack() { return null }')).toMatchObject({ kind: 'drop' })
    expect(await run('function onTrack() {}')).toMatchObject({ kind: 'drop' })
    expect(await run("function onTrack() { throw new RetryError('later') }")).toMatchObject({
      kind: 'retry',
      message: 'later',
    })
    expect(await run("function onTrack() { throw new ValidationError('no email') }")).toMatchObject({
      kind: 'error',
      message: 'no email',
    })
    expect(await run('function onTrack() { return 42 }')).toMatchObject({
      kind: 'error',
      message: expect.stringContaining('a number, not an event'),
    })
    expect(await run('async function onTrack() { await new Promise(() => {}) }')).toMatchObject({
      kind: 'error',
      message: expect.stringContaining('never settles'),
    })
  })

  it('stops an endless loop at functionTimeout, and the next call runs in a fresh sandbox', async () => {
    const sandbox = await FunctionSandbox.start({
      code: "function onTrack(e) { if (e.event === 'loop') for (;;) {} return e }",
      filename: 'loop.js',
      // Long enough that the call after the loop, on a fresh worker, meets it on a loaded machine:
      // only the loop runs into it.
      timeoutMs: 2_000,
    })
    try {
      expect(await sandbox.call({ ...event, event: 'loop' })).toMatchObject({
        kind: 'error',
        code: 'ERR_FUNCTION_TIMEOUT',
      })
      expect(await sandbox.call(event)).toMatchObject({ kind: 'event' })
    } finally {
      await sandbox.close()
    }
  })

  it('stops a memory blow-up at functionMemory with ERR_FUNCTION_MEMORY', async () => {
    const sandbox = await FunctionSandbox.start({
      code: "function onTrack(e) { const a = []; for (;;) a.push(new Array(1000).fill('x' + a.length)) }",
      filename: 'memory.js',
      memoryMb: 8,
      timeoutMs: 30_000,
    })
    try {
      expect(await sandbox.call(event)).toMatchObject({ kind: 'error', code: 'ERR_FUNCTION_MEMORY' })
    } finally {
      await sandbox.close()
    }
  })
})

describe('console', () => {
  it(`keeps ${FUNCTION_LOG_LINES} lines per call and says the rest were dropped`, async () => {
    const result = await run(
      "function onTrack(e) { for (let i = 0; i < 50; i++) console.log('line', i, { i }); console.warn('late'); return e }",
    )
    expect(result.logs).toHaveLength(FUNCTION_LOG_LINES)
    expect(result.logs[0]).toBe('line 0 {"i":0}')
    expect(result.logsTruncated).toBe(true)
  })

  it(`keeps ${FUNCTION_LOG_BYTES} bytes per call`, async () => {
    const result = await run(
      "function onTrack(e) { for (let i = 0; i < 5; i++) console.error('é'.repeat(1000)); return e }",
    )
    expect(Buffer.byteLength(result.logs.join(''))).toBeGreaterThan(FUNCTION_LOG_BYTES - 2)
    expect(Buffer.byteLength(result.logs.join(''))).toBeLessThanOrEqual(FUNCTION_LOG_BYTES)
    // The line that crosses the cap is cut there, not dropped whole.
    expect(result.logs).toHaveLength(3)
    expect(result.logs[0]).toMatch(/^error: é+$/)
    expect(result.logs[2]).toMatch(/^error: é{37}$/)
    expect(result.logsTruncated).toBe(true)
  })

  it('starts afresh at each call, and keeps the lines logged before an error', async () => {
    const sandbox = await FunctionSandbox.start({
      code: "function onTrack(e) { console.log('saw', e.event); if (e.event === 'bad') throw new Error('bad event'); return e }",
      filename: 'logs.js',
    })
    try {
      expect((await sandbox.call(event)).logs).toEqual(['saw Signed Up'])
      expect(await sandbox.call({ ...event, event: 'bad' })).toMatchObject({
        kind: 'error',
        message: 'bad event',
        logs: ['saw bad'],
      })
    } finally {
      await sandbox.close()
    }
  })
})
