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
      timeoutMs: 50,
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

  it('resolves queued calls as errors once closed', async () => {
    const sandbox = await FunctionSandbox.start({ code: 'function onTrack(e) { return e }', filename: 'f.js' })
    const pending = [sandbox.call({ type: 'track', messageId: '1' }), sandbox.call({ type: 'track', messageId: '2' })]
    await sandbox.close()
    for (const result of await Promise.all(pending)) expect(result.kind).toBe('error')
  })
})
