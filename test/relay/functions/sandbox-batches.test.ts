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

  it('resolves queued calls as errors once closed', async () => {
    const sandbox = await FunctionSandbox.start({ code: 'function onTrack(e) { return e }', filename: 'f.js' })
    const pending = [sandbox.call({ type: 'track', messageId: '1' }), sandbox.call({ type: 'track', messageId: '2' })]
    await sandbox.close()
    for (const result of await Promise.all(pending)) expect(result.kind).toBe('error')
  })
})
