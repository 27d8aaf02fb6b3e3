import { describe, expect, it } from 'vitest'
import { FunctionSandbox } from '../../../src/relay/features/functions/sandbox'

// Calls waiting together go to the worker in one batch; one that ends its worker (a timeout, the
// memory limit) ends the batch there, and the calls after it run, in order, on a fresh worker.
describe('calls of a function sent together', () => {
  it('answers each call of a batch in order, and runs those after a timeout on a fresh worker', async () => {
    const sandbox = await FunctionSandbox.start({
      code: `let seen = 0
        function onTrack(e) { seen++; if (e.event === 'Loop') for (;;) {} return { ...e, properties: { seen } } }`,
      filename: 'batch.js',
      // Long enough that every call but the loop meets it on a loaded machine: only the loop runs into it.
      timeoutMs: 2_000,
    })
    try {
      const events = ['A', 'B', 'Loop', 'C', 'D'].map((event) => ({ type: 'track', event, messageId: event }))
      const results = await Promise.all(events.map((e) => sandbox.call(e)))
      expect(results.map((r) => r.kind)).toEqual(['event', 'event', 'error', 'event', 'event'])
      expect(results[2]).toMatchObject({ code: 'ERR_FUNCTION_TIMEOUT' })
      // Globals live as long as the worker: the fresh one after the timeout starts counting again.
      expect(
        results.map((r) => (r.kind === 'event' ? (r.event['properties'] as { seen: number }).seen : null)),
      ).toEqual([1, 2, null, 1, 2])
    } finally {
      await sandbox.close()
    }
  })

  it("keeps each call's own outcome in a batch: async, a retry, a drop, a promise that never settles", async () => {
    const sandbox = await FunctionSandbox.start({
      code: `async function onTrack(e) {
          console.log('at', e.event)
          if (e.event === 'Retry') throw new RetryError('later')
          if (e.event === 'Drop') return null
          if (e.event === 'Never') return new Promise(() => {})
          if (e.event === 'Throw') throw new Error('no ' + e.event)
          return { ...e, properties: { done: true } }
        }
        function onIdentify() { return null }`,
      filename: 'mixed.js',
      timeoutMs: 30_000,
    })
    try {
      const events = ['A', 'Retry', 'Never', 'Drop', 'Throw', 'B'].map((event) => ({ type: 'track', event }))
      const results = await Promise.all([...events, { type: 'identify' }].map((e) => sandbox.call(e)))
      expect(results.map((r) => r.kind)).toEqual(['event', 'retry', 'error', 'drop', 'error', 'event', 'drop'])
      expect(results[2]).toMatchObject({ message: expect.stringMatching(/never settles/), logs: ['at Never'] })
      expect(results[4]).toMatchObject({ message: 'no Throw', logs: ['at Throw'] })
      expect(results.slice(0, 6).map((r) => r.logs)).toEqual(events.map((e) => [`at ${e.event}`]))
      expect(results[5]).toMatchObject({ event: { event: 'B', properties: { done: true } } })
    } finally {
      await sandbox.close()
    }
  })

  it('ends only the call that runs out of memory; its batch-mates keep their outcomes', async () => {
    const sandbox = await FunctionSandbox.start({
      code: `function onTrack(e) {
          if (e.event === 'Blow up') { const a = []; for (;;) a.push('x'.repeat(1024) + a.length) }
          return e
        }`,
      filename: 'memory.js',
      memoryMb: 8,
      timeoutMs: 30_000,
    })
    try {
      const events = ['A', 'Blow up', 'B'].map((event) => ({ type: 'track', event }))
      const results = await Promise.all(events.map((e) => sandbox.call(e)))
      expect(results.map((r) => r.kind)).toEqual(['event', 'error', 'event'])
      expect(results[1]).toMatchObject({ code: 'ERR_FUNCTION_MEMORY' })
    } finally {
      await sandbox.close()
    }
  })

  it('gives each call of a batch its own functionTimeout, not the batch', async () => {
    // Three calls of 400 ms each: 1.2 s in all, past the 1 s limit, while each call is within it.
    const sandbox = await FunctionSandbox.start({
      code: 'function onTrack(e) { const until = Date.now() + 400; while (Date.now() < until) {} return e }',
      filename: 'slow.js',
      timeoutMs: 1_000,
    })
    try {
      const events = ['A', 'B', 'C'].map((event) => ({ type: 'track', event }))
      const results = await Promise.all(events.map((e) => sandbox.call(e)))
      expect(results.map((r) => r.kind)).toEqual(['event', 'event', 'event'])
      // Each call's own time, not a share of the batch's.
      for (const result of results) expect(result.ms).toBeGreaterThanOrEqual(399)
    } finally {
      await sandbox.close()
    }
  })

  it('keeps a call that never settled from answering for another when a later call settles it', async () => {
    const sandbox = await FunctionSandbox.start({
      code: `let release, calls = 0
        async function onTrack(e) {
          calls++
          if (e.event === 'Wait') { await new Promise((resolve) => { release = resolve }); return { ...e, late: true } }
          if (e.event === 'Release') release()
          return { ...e, calls }
        }`,
      filename: 'stale.js',
      timeoutMs: 30_000,
    })
    try {
      const events = ['A', 'Wait', 'Release', 'B'].map((event) => ({ type: 'track', event }))
      const results = await Promise.all(events.map((e) => sandbox.call(e)))
      expect(results.map((r) => r.kind)).toEqual(['event', 'error', 'event', 'event'])
      expect(results[1]).toMatchObject({ message: expect.stringMatching(/never settles/) })
      expect(results.map((r) => (r.kind === 'event' ? r.event['event'] : null))).toEqual(['A', null, 'Release', 'B'])
      // No call ran twice: the settled one's continuation did not go on with the batch.
      expect(results[3]).toMatchObject({ event: { calls: 4 } })
      expect(await sandbox.call({ type: 'track', event: 'After' })).toMatchObject({ event: { calls: 5 } })
    } finally {
      await sandbox.close()
    }
  })

  it("keeps each reply with its own call whatever the code replaces (the prelude's methods, setters)", async () => {
    const sandbox = await FunctionSandbox.start({
      code: `const found = Object.getOwnPropertyNames(globalThis).filter((name) => name.startsWith('__'))
        for (let i = 0; i < 64; i++) Object.defineProperty(Array.prototype, i, { set() {}, configurable: true })
        const then = Promise.prototype.then
        // Calls each callback twice, as a broken promise library might.
        Promise.prototype.then = function (ok, bad) { return then.call(this, (v) => { ok(v); return ok(v) }, bad) }
        Array.prototype.join = () => 'joined'
        async function onTrack(e) { return { ...e, found } }`,
      filename: 'sabotage.js',
      timeoutMs: 30_000,
    })
    try {
      const events = ['A', 'B', 'C', 'D'].map((event) => ({ type: 'track', event }))
      const results = await Promise.all(events.map((e) => sandbox.call(e)))
      expect(results.map((r) => (r.kind === 'event' ? r.event['event'] : r.kind))).toEqual(['A', 'B', 'C', 'D'])
      // Nothing of the relay's own is on the global object for the code to call.
      expect(results[0]).toMatchObject({ event: { found: [] } })
    } finally {
      await sandbox.close()
    }
  })

  it('resolves queued calls as errors once closed', async () => {
    const sandbox = await FunctionSandbox.start({ code: 'function onTrack(e) { return e }', filename: 'f.js' })
    const pending = [sandbox.call({ type: 'track', messageId: '1' }), sandbox.call({ type: 'track', messageId: '2' })]
    await sandbox.close()
    for (const result of await Promise.all(pending)) expect(result.kind).toBe('error')
  })
})
