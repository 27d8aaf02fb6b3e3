import { afterEach, describe, expect, it } from 'vitest'
import { breakerSetup, countingReceiver, frozenClock, POLICY, unavailable } from './breaker-helpers'
import { waitFor } from '../helpers'

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

describe('the circuit breaker with several relays on one database', () => {
  it('shares each circuit: one probe per interval whichever relays watch it, and all drain on recovery', {
    timeout: 60_000,
  }, async () => {
    const down = await countingReceiver()
    cleanups.push(() => down.close())
    down.respond(unavailable())
    const clock = frozenClock()
    // A constant probe interval, so each step of the clock makes exactly one probe due.
    const setup = await breakerSetup({
      sources: { web: [down.url] },
      now: clock.now,
      policy: { probeInterval: 1000, maxProbeInterval: 1000 },
    })
    const relays = [setup.worker('relay-a'), setup.worker('relay-b')]
    cleanups.push(async () => {
      for (const relay of relays) await relay.stop(100)
      await setup.store.close()
    })
    // More than one relay claims at once (64), so both send, and both learn the circuit opened.
    await setup.enqueue('web', 200)
    for (const relay of relays) relay.wake()
    await Promise.all(relays.map((relay) => relay.idle()))

    // Each relay stops once it has seen the threshold itself or the shared circuit opened,
    // whichever comes first, with at most its own requests in flight on top: a bounded, one-off burst.
    const opened = down.requests.length
    expect(opened).toBeLessThanOrEqual(2 * (POLICY.failureThreshold + POLICY.maxInFlightPerUrl - 1))
    for (const relay of relays) expect(relay.circuits()[0]!.state).toBe('open')

    // Each step makes a probe due at both relays: only the one that takes the circuit's row sends it.
    const rounds = 3
    for (let round = 1; round <= rounds; round++) {
      clock.advance(1000)
      await waitFor(() => (down.requests.length === opened + round ? true : undefined), `probe ${round}`)
      // Until the probe's failure is written, the row is held; once written, the next is 1 s on.
      await waitFor(async () => {
        const [circuit] = await setup.circuits.get([down.url])
        return circuit?.state === 'open' && circuit.nextProbeAt! > clock.now() ? true : undefined
      }, `probe ${round} recorded`)
      // Give the other relay's timer its chance to fire (and be refused).
      await new Promise((resolve) => setTimeout(resolve, 1200))
      expect(down.requests).toHaveLength(opened + round)
    }

    // The receiver is back: the next probe closes the circuit and every delivery goes, once.
    down.respond((_req, res) => void res.writeHead(200).end())
    clock.advance(1000)
    await waitFor(async () => ((await setup.log()).every((d) => d.status === 'delivered') ? true : undefined))
    await Promise.all(relays.map((relay) => relay.idle()))
    const delivered = down.requests.slice(opened + rounds)
    expect(delivered).toHaveLength(200)
    expect(new Set(delivered).size).toBe(200)
  })
})
