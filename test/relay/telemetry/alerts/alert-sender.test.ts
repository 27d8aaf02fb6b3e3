import { MockAgent } from 'undici'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { AlertSender } from '../../../../src/relay/telemetry/alerts/alert-sender'

const ALERTS = 'https://alerts.example.com'
const HOOK = 'https://hooks.example.com/a?token=secret-in-query'

let agent: MockAgent
let received: any[]
let answer: number

beforeEach(() => {
  vi.useFakeTimers({ now: new Date('2026-11-26T19:00:00.000Z') })
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
})

function sender(events?: ('endpoint.failing' | 'endpoint.recovered' | 'delivery.failed')[]): AlertSender {
  return new AlertSender({ url: `${ALERTS}/notify`, ...(events ? { events } : {}) }, { dispatcher: agent })
}

describe('AlertSender', () => {
  it('POSTs endpoint.failing and endpoint.recovered with the URL, never its query', async () => {
    const alerts = sender()
    alerts.endpointFailing(HOOK, 'HTTP 503')
    alerts.endpointRecovered(HOOK)
    await vi.advanceTimersByTimeAsync(10)
    expect(received).toEqual([
      {
        event: 'endpoint.failing',
        at: '2026-11-26T19:00:00.000Z',
        url: 'https://hooks.example.com/a',
        error: 'HTTP 503',
      },
      { event: 'endpoint.recovered', at: '2026-11-26T19:00:00.000Z', url: 'https://hooks.example.com/a' },
    ])
    alerts.stop()
  })

  it('sends delivery.failed at most once a minute per endpoint, with the dead letters counted since', async () => {
    const alerts = sender()
    alerts.deadLettered(HOOK, 'web', 'HTTP 404')
    await vi.advanceTimersByTimeAsync(10)
    expect(received).toMatchObject([{ event: 'delivery.failed', source: 'web', count: 1, error: 'HTTP 404' }])
    for (let i = 0; i < 7; i++) alerts.deadLettered(HOOK, 'web', 'HTTP 410')
    // Another endpoint is not held back by this one's minute.
    alerts.deadLettered('https://other.example.com/b', 'app', undefined)
    await vi.advanceTimersByTimeAsync(59_000)
    expect(received).toHaveLength(2)
    expect(received[1]).toMatchObject({ url: 'https://other.example.com/b', count: 1 })
    await vi.advanceTimersByTimeAsync(1_000)
    expect(received).toHaveLength(3)
    expect(received[2]).toEqual({
      event: 'delivery.failed',
      at: '2026-11-26T19:01:00.000Z',
      url: 'https://hooks.example.com/a',
      source: 'web',
      count: 7,
      error: 'HTTP 410',
    })
    // A quiet minute: nothing more; then the next dead letter is told at once again.
    await vi.advanceTimersByTimeAsync(120_000)
    expect(received).toHaveLength(3)
    alerts.deadLettered(HOOK, 'web', 'HTTP 404')
    await vi.advanceTimersByTimeAsync(10)
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
    alerts.endpointRecovered(HOOK)
    await vi.advanceTimersByTimeAsync(10)
    expect(received.map((r) => r.event)).toEqual(['endpoint.recovered'])
    alerts.stop()
  })
})
