import { afterEach, describe, expect, it } from 'vitest'
import type { Worker } from '../../../src/relay/delivery/worker'
import type { SqliteStore } from '../../../src/relay/store/sqlite/sqlite-store'
import { waitFor } from '../../support/wait-for'
import { breakerSetup, type CountingReceiver, countingReceiver, frozenClock } from '../delivery/breaker-helpers'
import { runUntilIdle } from '../fixtures/worker'

// A paused webhook URL as a worker meets it: no request (not even a probe) however long the pause
// lasts, its deliveries waiting past the four-hour window without being dead-lettered, and a
// resume (by the admin API, through the store) that sends them at once.
const ROUTES = [{ source: 'web', destination: 'Webhooks' }]

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function receiver(): Promise<CountingReceiver> {
  const started = await countingReceiver()
  cleanups.push(() => started.close())
  return started
}

function stopAfter(store: SqliteStore, worker: Worker) {
  cleanups.push(async () => {
    await worker.stop(100)
    await store.close()
  })
}

describe('a paused webhook URL', () => {
  it('gets no request while paused, loses none of its deliveries past the window, and drains on resume', async () => {
    const hook = await receiver()
    const clock = frozenClock()
    const setup = await breakerSetup({ sources: { web: [hook.url] }, now: clock.now })
    await setup.circuits.pause(hook.url, clock.now())
    const worker = setup.worker()
    stopAfter(setup.store, worker)
    await setup.enqueue('web', 5)

    await runUntilIdle(worker)
    // Five hours, looked at every few minutes: more than the four-hour window.
    for (let hour = 0; hour < 5 * 12; hour++) {
      clock.advance(5 * 60_000)
      await runUntilIdle(worker)
    }
    expect(hook.requests).toEqual([])
    const waiting = await setup.log()
    expect(waiting.map((d) => d.status)).toEqual(Array(5).fill('pending'))
    expect(waiting[0]?.lastError).toContain(`${hook.url} paused by an operator`)

    // Resumed from elsewhere (the admin API): the worker notices by itself and sends them all.
    expect(await setup.circuits.resume(hook.url, ROUTES, clock.now())).toEqual({ wasPaused: true, woken: 5 })
    await waitFor(() => (hook.requests.length === 5 ? true : undefined), 'the five deliveries after the resume')
    await waitFor(async () => ((await setup.log()).every((d) => d.status === 'delivered') ? true : undefined))
  })
})
