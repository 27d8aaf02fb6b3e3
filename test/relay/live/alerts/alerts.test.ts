import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createRelay, type Relay, RelayConfigError } from '../../../../src/relay/index'
import { post, type Receiver, startReceiver, startRelay, track, waitFor } from '../../helpers'

// Alerts from a running relay to an operator's URL (a real receiver): a circuit that opens and
// closes, and a dead letter.

let receiver: Receiver
let operator: Receiver
let relay: Relay | undefined
let receiverAnswer = 200

beforeEach(async () => {
  receiver = await startReceiver()
  receiverAnswer = 200
  receiver.respond((_req, res) => {
    const event = receiver.received.at(-1)?.body['event']
    res.writeHead(event === 'Gone' ? 404 : receiverAnswer).end()
  })
  operator = await startReceiver()
})
afterEach(async () => {
  await relay?.close()
  relay = undefined
  await receiver.close()
  await operator.close()
})

const alerts = () => operator.received.map((r) => r.body)

describe('alerts', () => {
  it('POSTs endpoint.failing when this relay opens a circuit and endpoint.recovered when it closes', async () => {
    relay = await startRelay(receiver.url, {
      alerts: { url: operator.url },
      breaker: { failureThreshold: 2, probeInterval: 100, maxProbeInterval: 200 },
    })
    receiverAnswer = 503
    for (let i = 0; i < 3; i++) expect((await post(`${relay.url}/v1/track`, track())).status).toBe(200)
    const failing = await waitFor(
      () => alerts().find((a) => a['event'] === 'endpoint.failing'),
      'endpoint.failing',
      20_000,
    )
    expect(failing).toEqual({
      event: 'endpoint.failing',
      at: expect.any(String),
      url: receiver.url,
      error: expect.stringContaining('503'),
      status: 503,
    })
    receiverAnswer = 200
    const recovered = await waitFor(
      () => alerts().find((a) => a['event'] === 'endpoint.recovered'),
      'endpoint.recovered',
      20_000,
    )
    expect(recovered).toEqual({
      event: 'endpoint.recovered',
      at: expect.any(String),
      url: receiver.url,
      status: 200,
    })
    // Once per change.
    expect(alerts().filter((a) => a['event'] === 'endpoint.failing')).toHaveLength(1)
  })

  it('POSTs delivery.failed for a dead letter, with its count and error', async () => {
    relay = await startRelay(receiver.url, { alerts: { url: operator.url, events: ['delivery.failed'] } })
    await post(`${relay.url}/v1/track`, track({ event: 'Gone' }))
    const failed = await waitFor(() => alerts().find((a) => a['event'] === 'delivery.failed'), 'delivery.failed')
    expect(failed).toEqual({
      event: 'delivery.failed',
      at: expect.any(String),
      url: receiver.url,
      source: 'web',
      count: 1,
      error: expect.stringContaining('404'),
      status: 404,
    })
  })

  it('sends no endpoint.recovered when a receiver goes from 503 to 404, and one delivery.failed for its backlog', async () => {
    relay = await startRelay(receiver.url, {
      alerts: { url: operator.url },
      breaker: { failureThreshold: 2, probeInterval: 100, maxProbeInterval: 200 },
    })
    receiverAnswer = 503
    for (let i = 0; i < 7; i++) expect((await post(`${relay.url}/v1/track`, track())).status).toBe(200)
    await waitFor(() => alerts().find((a) => a['event'] === 'endpoint.failing'), 'endpoint.failing', 20_000)
    // The probe is answered 404: the circuit closes and the whole backlog is dead-lettered at once.
    receiverAnswer = 404
    const failed = await waitFor(
      () => alerts().find((a) => a['event'] === 'delivery.failed'),
      'delivery.failed',
      20_000,
    )
    expect(failed).toEqual({
      event: 'delivery.failed',
      at: expect.any(String),
      url: receiver.url,
      source: 'web',
      count: 7,
      error: expect.stringContaining('404'),
      status: 404,
    })
    expect(alerts().map((a) => a['event'])).toEqual(['endpoint.failing', 'delivery.failed'])
    // The first 2xx is the recovery.
    receiverAnswer = 200
    expect((await post(`${relay.url}/v1/track`, track())).status).toBe(200)
    const recovered = await waitFor(
      () => alerts().find((a) => a['event'] === 'endpoint.recovered'),
      'endpoint.recovered',
      20_000,
    )
    expect(recovered).toMatchObject({ url: receiver.url, status: 200 })
    expect(alerts().map((a) => a['event'])).toEqual(['endpoint.failing', 'delivery.failed', 'endpoint.recovered'])
  })

  it('refuses an alerts option without a valid url or with an unknown event, never showing the URL', async () => {
    const start = (alertsOption: unknown) =>
      createRelay({
        port: 0,
        database: ':memory:',
        sources: [{ name: 'web', writeKey: 'k' }],
        alerts: alertsOption as never,
      })
    await expect(start({})).rejects.toThrow(/alerts\.url: is required/)
    await expect(start({ url: 'ftp://token-in-here@example.com' })).rejects.toThrow(RelayConfigError)
    await expect(start({ url: 'ftp://token-in-here@example.com' })).rejects.not.toThrow(/token-in-here/)
    await expect(start({ url: 'https://a.example.com', events: ['endpoint.gone'] })).rejects.toThrow(
      /alerts\.events\[0\]/,
    )
    await expect(start({ url: 'https://a.example.com', when: 'always' })).rejects.toThrow(/alerts\.when/)
  })
})
