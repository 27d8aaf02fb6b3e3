import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MockAgent } from 'undici'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { Store } from '../../../../src/relay/store/store'
import {
  DELIVERY_FAILED_GATHER_MAX_MS,
  DELIVERY_FAILED_GATHER_MS,
} from '../../../../src/relay/features/live/alerts/alert-notice'
import { AlertSender } from '../../../../src/relay/features/live/alerts/alert-sender'
import { newDatabase, openTestStore, STORE_KINDS, type StoreKind } from '../../../support/stores'

const ALERTS = 'https://alerts.example.com'
const HOOK = 'https://hooks.example.com/a?token=secret-in-query'

let agent: MockAgent
let received: any[]
let answer: number
let dir: string
const stores: Store[] = []

// The store's I/O is real (PostgreSQL's too): only the timers and the clock are the test's.
const FAKED = ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] as const

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'alert-sender-'))
  vi.useFakeTimers({ now: new Date('2026-11-26T19:00:00.000Z'), toFake: [...FAKED] })
  agent = new MockAgent()
  agent.disableNetConnect()
  received = []
  answer = 200
  agent
    .get(ALERTS)
    .intercept({ path: '/notify', method: 'POST' })
    .reply((options) => {
      received.push(JSON.parse(String(options.body)))
      return { statusCode: answer, data: '' }
    })
    .persist()
})
afterEach(async () => {
  vi.useRealTimers()
  await agent.close()
  for (const store of stores.splice(0)) await store.close()
  rmSync(dir, { recursive: true, force: true })
})

type AlertEvent = 'endpoint.failing' | 'endpoint.recovered' | 'delivery.failed'

/** A store of `kind` at `database` (a new one when not given), on the test's clock. */
async function storeOf(kind: StoreKind, database?: string): Promise<Store> {
  const store = await openTestStore(kind, () => Date.now(), database)
  stores.push(store)
  return store
}

function senderOn(store: Store, events?: AlertEvent[]): AlertSender {
  const options = { url: `${ALERTS}/notify`, ...(events ? { events } : {}) }
  return new AlertSender(options, { dispatcher: agent, claims: store.alertClaims })
}

it('docs/operations.md gives the gathering time of delivery.failed as the code has it', () => {
  const docs = readFileSync(new URL('../../../../docs/operations.md', import.meta.url), 'utf8').replace(/\s+/g, ' ')
  const seconds = (ms: number) => `${ms / 1000} s`
  expect(docs).toContain(
    `nothing more of the endpoint for ${seconds(DELIVERY_FAILED_GATHER_MS)} (${seconds(DELIVERY_FAILED_GATHER_MAX_MS)} at most)`,
  )
})

describe.each(STORE_KINDS)('AlertSender on %s', (kind) => {
  let sender: (events?: AlertEvent[]) => AlertSender
  beforeEach(async () => {
    const store = await storeOf(kind)
    sender = (events) => senderOn(store, events)
  })

  it('POSTs endpoint.failing and endpoint.recovered with the URL, never its query, and the status', async () => {
    const alerts = sender()
    alerts.endpointFailing(HOOK, 'HTTP 503', 503)
    alerts.endpointRecovered(HOOK, 200)
    await vi.advanceTimersByTimeAsync(10)
    expect(received).toEqual([
      {
        event: 'endpoint.failing',
        at: '2026-11-26T19:00:00.000Z',
        url: 'https://hooks.example.com/a',
        error: 'HTTP 503',
        status: 503,
      },
      {
        event: 'endpoint.recovered',
        at: '2026-11-26T19:00:00.000Z',
        url: 'https://hooks.example.com/a',
        status: 200,
      },
    ])
    alerts.stop()
  })

  it('sends no endpoint.recovered for a circuit a 4xx closed', async () => {
    const alerts = sender()
    alerts.endpointRecovered(HOOK, 404)
    await vi.advanceTimersByTimeAsync(10)
    expect(received).toEqual([])
    alerts.stop()
  })

  it('sends the dead letters of one moment in one delivery.failed, with the last status', async () => {
    const alerts = sender()
    for (let i = 0; i < 7; i++) alerts.deadLettered(HOOK, 'web', 'HTTP 404', 404)
    await alerts.idle()
    // One more while the notice gathers: it waits for a quiet moment.
    await vi.advanceTimersByTimeAsync(DELIVERY_FAILED_GATHER_MS / 2)
    alerts.deadLettered(HOOK, 'web', 'HTTP 410', 410)
    await vi.advanceTimersByTimeAsync(DELIVERY_FAILED_GATHER_MS / 2 + 10)
    expect(received).toEqual([])
    await settle(alerts)
    expect(received).toEqual([
      {
        event: 'delivery.failed',
        at: expect.any(String),
        url: 'https://hooks.example.com/a',
        source: 'web',
        count: 8,
        error: 'HTTP 410',
        status: 410,
      },
    ])
    alerts.stop()
  })

  it('sends a gathering delivery.failed at the longest gathering time under a steady trickle', async () => {
    const alerts = sender()
    alerts.deadLettered(HOOK, 'web', 'HTTP 404', 404)
    await alerts.idle()
    const step = DELIVERY_FAILED_GATHER_MS - 100
    let count = 1
    for (let t = step; t < DELIVERY_FAILED_GATHER_MAX_MS - 200; t += step, count++) {
      await vi.advanceTimersByTimeAsync(step)
      alerts.deadLettered(HOOK, 'web', 'HTTP 404', 404)
    }
    expect(received).toEqual([])
    await vi.advanceTimersByTimeAsync(DELIVERY_FAILED_GATHER_MS)
    expect(received).toMatchObject([{ event: 'delivery.failed', count }])
    alerts.stop()
  })

  it('sends delivery.failed at most once a minute per endpoint, with the dead letters counted since', async () => {
    const alerts = sender()
    alerts.deadLettered(HOOK, 'web', 'HTTP 404')
    await settle(alerts)
    expect(received).toMatchObject([{ event: 'delivery.failed', source: 'web', count: 1, error: 'HTTP 404' }])
    for (let i = 0; i < 7; i++) alerts.deadLettered(HOOK, 'web', 'HTTP 410')
    // Another endpoint is not held back by this one's minute.
    alerts.deadLettered('https://other.example.com/b', 'app', undefined)
    await settle(alerts)
    await vi.advanceTimersByTimeAsync(57_000)
    expect(received).toHaveLength(2)
    expect(received[1]).toMatchObject({ url: 'https://other.example.com/b', count: 1 })
    await vi.advanceTimersByTimeAsync(1_000)
    await settle(alerts)
    expect(received).toHaveLength(3)
    expect(received[2]).toEqual({
      event: 'delivery.failed',
      // The minute's end, and the store's answer (the settling moments of the test's clock).
      at: expect.stringMatching(/^2026-11-26T19:01:0\d\.\d{3}Z$/),
      url: 'https://hooks.example.com/a',
      source: 'web',
      count: 7,
      error: 'HTTP 410',
    })
    // A quiet minute: nothing more; then the next dead letter is told at once again.
    await vi.advanceTimersByTimeAsync(120_000)
    await settle(alerts)
    expect(received).toHaveLength(3)
    alerts.deadLettered(HOOK, 'web', 'HTTP 404')
    await settle(alerts)
    expect(received).toHaveLength(4)
    expect(received[3]).toMatchObject({ count: 1 })
    alerts.stop()
  })

  it('retries a failed alert with back-off, and the caller never waits for it', async () => {
    answer = 503
    const alerts = sender()
    alerts.endpointFailing(HOOK, 'timeout')
    await vi.advanceTimersByTimeAsync(10)
    expect(received).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(1_000)
    expect(received).toHaveLength(2)
    answer = 200
    await vi.advanceTimersByTimeAsync(2_000)
    expect(received).toHaveLength(3)
    await vi.advanceTimersByTimeAsync(60_000)
    // Sent: no more tries.
    expect(received).toHaveLength(3)
    alerts.stop()
  })

  it('sends only the events configured', async () => {
    const alerts = sender(['endpoint.recovered'])
    alerts.endpointFailing(HOOK, 'x')
    alerts.deadLettered(HOOK, 'web', 'x')
    alerts.endpointRecovered(HOOK, 204)
    await settle(alerts)
    expect(received.map((r) => r.event)).toEqual(['endpoint.recovered'])
    alerts.stop()
  })

  it('sends delivery.failed once a minute per endpoint across relays on one store, counting every relay’s dead letters', async () => {
    const database = await newDatabase(kind, dir, 'shared.db')
    const relayA = senderOn(await storeOf(kind, database))
    const relayB = senderOn(await storeOf(kind, database))
    relayA.deadLettered(HOOK, 'web', 'HTTP 404')
    await settle(relayA)
    relayB.deadLettered(HOOK, 'web', 'HTTP 404')
    await settle(relayB)
    // The first is told at once; the second, a moment later on another relay, is held for the minute.
    expect(received).toMatchObject([{ event: 'delivery.failed', count: 1 }])
    for (let i = 0; i < 3; i++) relayA.deadLettered(HOOK, 'web', 'HTTP 410')
    for (let i = 0; i < 2; i++) relayB.deadLettered(HOOK, 'app', 'HTTP 410')
    await settle(relayA, relayB)
    await vi.advanceTimersByTimeAsync(60_000)
    await settle(relayA, relayB)
    // Both relays came back at the minute's end: one of them sent the notice of all six.
    expect(received).toHaveLength(2)
    expect(received[1]).toMatchObject({ event: 'delivery.failed', url: 'https://hooks.example.com/a', count: 6 })
    await vi.advanceTimersByTimeAsync(120_000)
    await settle(relayA, relayB)
    expect(received).toHaveLength(2)
    relayA.stop()
    relayB.stop()
  })
})

/** Lets the store answer each sender's claims, then the alerts they decided go out (once gathered). */
async function settle(...senders: AlertSender[]): Promise<void> {
  for (const sender of senders) await sender.idle()
  await vi.advanceTimersByTimeAsync(DELIVERY_FAILED_GATHER_MS + 10)
}
