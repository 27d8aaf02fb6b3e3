import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { format } from 'node:util'
import { afterEach, describe, expect, it } from 'vitest'
import { log as relayLog } from '../../../src/relay/log'
import { openSqliteStore } from '../../../src/relay/store/sqlite/sqlite-store'
import { WebhookDestination } from '../../../src/webhooks/index'
import type { Relay } from '../../../src/relay/index'
import type { SqliteStore } from '../../../src/relay/store/sqlite/sqlite-store'
import {
  breakerSetup,
  type CountingReceiver,
  countingReceiver,
  delivery,
  frozenClock,
  POLICY,
  T0,
  unavailable,
} from './breaker-helpers'
import { ADMIN_TOKEN, adminGet, post, startRelay, track, waitFor } from '../helpers'
import type { Worker } from '../../../src/relay/delivery/worker'
import { runUntilIdle, testWorker } from '../fixtures/worker'
import { parseExposition, sampleValue } from '../telemetry/prometheus'

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function receiver(): Promise<CountingReceiver> {
  const started = await countingReceiver()
  cleanups.push(() => started.close())
  return started
}

function track_(store: SqliteStore, ...workers: Worker[]) {
  cleanups.push(async () => {
    for (const worker of workers) await worker.stop(100)
    await store.close()
  })
}

describe('the circuit breaker', () => {
  it('opens after a run of failures and stops sending to the URL', async () => {
    const down = await receiver()
    down.respond(unavailable())
    const clock = frozenClock()
    // Probes an hour apart: none falls in this test, so every request counted is an attempt.
    const setup = await breakerSetup({
      sources: { web: [down.url] },
      now: clock.now,
      policy: { probeInterval: 3_600_000, maxProbeInterval: 3_600_000 },
    })
    const worker = setup.worker()
    track_(setup.store, worker)
    await setup.enqueue('web', 50)

    await runUntilIdle(worker)
    // The threshold, plus at most what was in flight when the third failure came back.
    expect(down.requests.length).toBeGreaterThanOrEqual(POLICY.failureThreshold)
    expect(down.requests.length).toBeLessThanOrEqual(POLICY.failureThreshold + POLICY.maxInFlightPerUrl)
    expect(worker.circuits()).toEqual([
      expect.objectContaining({ url: down.url, state: 'open', inFlight: 0, lastError: 'HTTP 503' }),
    ])

    // Ten minutes on, every retry is due: none goes out while the circuit is open.
    const sent = down.requests.length
    clock.advance(10 * 60 * 1000)
    await runUntilIdle(worker)
    expect(down.requests).toHaveLength(sent)
    const log = await setup.log()
    expect(log.map((d) => d.status)).toEqual(Array(50).fill('pending'))
    const waiting = log.filter((d) => d.attempts.length === 0)
    expect(waiting.length).toBeGreaterThanOrEqual(50 - sent)
    for (const d of waiting) {
      expect(d.lastError).toBe(
        `circuit open for ${down.url} (next probe at ${new Date(T0 + 3_600_000).toISOString()}); last error: ${down.url}: HTTP 503`,
      )
    }
  })

  it('closes on a probe that is answered and sends every waiting delivery at once', async () => {
    const down = await receiver()
    down.respond(unavailable())
    const clock = frozenClock()
    const setup = await breakerSetup({ sources: { web: [down.url] }, now: clock.now })
    const worker = setup.worker()
    track_(setup.store, worker)
    await setup.enqueue('web', 30)
    await runUntilIdle(worker)
    const failed = down.requests.length
    expect(worker.circuits()[0]!.state).toBe('open')

    // The receiver is back. The clock moves to the first probe only: the deliveries' own
    // retries (minutes away for the parked ones) are not due, so only the probe can release them.
    down.respond((_req, res) => void res.writeHead(200).end())
    clock.advance(POLICY.probeInterval)
    await waitFor(async () => ((await setup.log()).every((d) => d.status === 'delivered') ? true : undefined))
    await worker.idle()
    // One probe, then each message once: nothing sent twice, nothing left waiting.
    expect(down.requests.length - failed).toBe(30)
    expect(new Set(down.requests.slice(failed)).size).toBe(30)
    expect(worker.circuits()[0]).toMatchObject({ state: 'closed', failures: 0 })
  })

  it('skips an open URL of a delivery with several, and sends to the others', async () => {
    const down = await receiver()
    const up = await receiver()
    down.respond(unavailable())
    const clock = frozenClock()
    const setup = await breakerSetup({ sources: { down: [down.url], both: [down.url, up.url] }, now: clock.now })
    const worker = setup.worker()
    track_(setup.store, worker)
    await setup.enqueue('down', 10)
    await runUntilIdle(worker)
    expect(worker.circuits().find((c) => c.url === down.url)!.state).toBe('open')

    const before = down.requests.length
    await setup.enqueue('both', 10)
    await runUntilIdle(worker)
    expect(down.requests).toHaveLength(before)
    expect(up.requests.sort()).toEqual(Array.from({ length: 10 }, (_, i) => `both-${i}`).sort())
    const both = (await setup.log()).filter((d) => d.source === 'both')
    expect(both.map((d) => d.status)).toEqual(Array(10).fill('delivered'))
    expect(both[0]!.attempts.map((a) => a.url)).toEqual([up.url])
  })
})

describe('the circuit breaker across a restart', () => {
  it('knows a circuit left open by the relay’s last run, and sends nothing there', async () => {
    const down = await receiver()
    down.respond(unavailable())
    const dir = mkdtempSync(join(tmpdir(), 'tracklet-breaker-'))
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }))
    const clock = frozenClock()
    const start = async () => {
      const store = await openSqliteStore(join(dir, 'relay.db'), clock.now)
      const worker = testWorker({
        store,
        destination: new WebhookDestination({ webhooks: [{ url: down.url }] }),
        now: clock.now,
        breaker: { ...POLICY, circuits: store.circuits, random: () => 0 },
      })
      return { store, worker }
    }
    const first = await start()
    await first.store.enqueue(Array.from({ length: 10 }, (_, i) => delivery('web', `a-${i}`)))
    await runUntilIdle(first.worker)
    await first.worker.stop(100)
    await first.store.close()
    const sent = down.requests.length

    const second = await start()
    track_(second.store, second.worker)
    await second.store.enqueue(Array.from({ length: 10 }, (_, i) => delivery('web', `b-${i}`)))
    await second.worker.idle() // it reads the circuits as it starts
    await runUntilIdle(second.worker)
    expect(down.requests).toHaveLength(sent)
    expect(second.worker.circuits()[0]!.state).toBe('open')
    const fresh = (await second.store.list({ after: 0, limit: 100 })).filter((d) => d.messageId.startsWith('b-'))
    expect(fresh.map((d) => d.lastError?.startsWith(`circuit open for ${down.url}`))).toEqual(Array(10).fill(true))
  })
})

describe('the circuit breaker’s log', () => {
  const saved = { enabled: relayLog.enabled, log: relayLog.log }
  afterEach(() => {
    relayLog.enabled = saved.enabled
    relayLog.log = saved.log
  })

  it('names a URL by origin and path only, never its query string, from opening to closing', async () => {
    const lines: string[] = []
    relayLog.enabled = true
    relayLog.log = (...args: unknown[]) => lines.push(format(...args))
    const down = await receiver()
    down.respond(unavailable())
    const url = `${down.url}?token=tok-s3cret`
    const clock = frozenClock()
    const setup = await breakerSetup({ sources: { web: [url] }, now: clock.now })
    const worker = setup.worker()
    track_(setup.store, worker)
    await setup.enqueue('web', 10)
    await runUntilIdle(worker)
    down.respond((_req, res) => void res.writeHead(200).end())
    clock.advance(POLICY.probeInterval)
    await waitFor(async () => ((await setup.log()).every((d) => d.status === 'delivered') ? true : undefined))
    const output = lines.join('\n')
    expect(output).toContain(`circuit of ${down.url} open`)
    expect(output).toContain(`probing ${down.url}`)
    expect(output).toContain(`circuit of ${down.url} closed`)
    expect(output).not.toContain('tok-s3cret')
    expect(worker.circuits()[0]!.url).toBe(down.url)
  })
})

describe('the circuit breaker in a relay', () => {
  let relay: Relay | undefined
  afterEach(async () => {
    await relay?.close()
    relay = undefined
  })

  it('shows a waiting delivery’s circuit in the delivery log, and drains once the receiver is back', async () => {
    const down = await receiver()
    down.respond(unavailable())
    relay = await startRelay(down.url, {
      breaker: { failureThreshold: 2, probeInterval: 200, maxProbeInterval: 400 },
      maxInFlightPerUrl: 1,
    })
    const batch = Array.from({ length: 20 }, (_, i) => track({ messageId: `m-${i}` }))
    expect((await post(`${relay.url}/v1/batch`, { batch })).body.accepted).toBe(20)
    const waiting = await waitFor(async () => {
      const { body } = await adminGet(`${relay!.url}/v1/deliveries?status=pending&limit=100`)
      return (body.deliveries as any[]).find((d) => d.lastError?.startsWith(`circuit open for ${down.url}`))
    }, 'a delivery waiting on an open circuit')
    expect(waiting.lastError).toMatch(/\(next probe at \d{4}-\d\d-\d\dT[\d:.]+Z\); last error: .*: HTTP 503$/)
    expect(waiting.attempts).toEqual([])
    // The metrics show the URL's circuit as not closed (open, or half-open while a probe is out).
    const during = await circuitMetrics(relay.url, down.url)
    expect(during.closed).toBe(0)
    expect((during.open ?? 0) + (during['half-open'] ?? 0)).toBe(1)

    down.respond((_req, res) => void res.writeHead(200).end())
    await waitFor(async () => {
      const { body } = await adminGet(`${relay!.url}/v1/deliveries?status=delivered&limit=100`)
      return body.deliveries.length === 20 ? true : undefined
    }, 'every delivery delivered')
    // Every message reached the receiver once it was back.
    expect(new Set(down.requests).size).toBe(20)
    expect(await circuitMetrics(relay.url, down.url)).toEqual({ closed: 1, open: 0, 'half-open': 0 })
  })
})

/** The relay's `tracklet_circuit_state` gauges for `url`, by state, from a real scrape. */
async function circuitMetrics(relayUrl: string, url: string): Promise<Record<string, number | undefined>> {
  const response = await fetch(`${relayUrl}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
  const samples = parseExposition(await response.text())
  const states = ['closed', 'open', 'half-open']
  return Object.fromEntries(
    states.map((state) => [state, sampleValue(samples, 'tracklet_circuit_state', { url, state })]),
  )
}
