import { request } from 'undici'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createRelay, type Relay, RelayConfigError } from '../../../src/relay/index'
import { StoreHealth } from '../../../src/relay/telemetry/health'
import { RelayMetrics } from '../../../src/relay/telemetry/metrics'
import { openSqliteStore } from '../../../src/relay/store/sqlite/sqlite-store'
import {
  ADMIN_TOKEN,
  adminGet,
  basic,
  post,
  type Receiver,
  startReceiver,
  startRelay,
  track,
  WRITE_KEY,
  waitFor,
} from '../helpers'
import { parseExposition, type Sample, sampleValue } from './prometheus'

const METRICS_TOKEN = 'metrics-token-for-tests'

let receiver: Receiver
let relay: Relay
const others: Relay[] = []

beforeEach(async () => {
  receiver = await startReceiver()
  // The receiver answers by the event's name: a 404 dead-letters at once, a 503 with a long
  // Retry-After leaves the delivery pending for an hour.
  receiver.respond((_req, res) => {
    const event = receiver.received.at(-1)?.body['event']
    if (event === 'Gone') res.writeHead(404).end()
    else if (event === 'Busy') res.writeHead(503, { 'retry-after': '3600' }).end()
    else res.writeHead(200).end('ok')
  })
  relay = await startRelay(receiver.url, { metricsToken: METRICS_TOKEN })
})
afterEach(async () => {
  for (const other of others.splice(0)) await other.close()
  await relay.close()
  await receiver.close()
})

async function scrape(url = relay.url, token = METRICS_TOKEN): Promise<Sample[]> {
  const response = await request(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } })
  expect(response.statusCode).toBe(200)
  expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/)
  return parseExposition(await response.body.text())
}

const web = { source: 'web' }
const webhooks = { source: 'web', destination: 'Webhooks' }

describe('GET /metrics', () => {
  it('counts ingest, refusals, delivery outcomes, attempt durations and the outbox, as traffic flows', async () => {
    const before = await scrape()
    expect(sampleValue(before, 'tracklet_messages_ingested_total', web)).toBe(0)
    expect(sampleValue(before, 'tracklet_delivery_attempts_total', { ...webhooks, outcome: 'delivered' })).toBe(0)
    expect(sampleValue(before, 'tracklet_outbox_deliveries', { ...web, status: 'pending' })).toBe(0)
    expect(sampleValue(before, 'tracklet_outbox_oldest_age_seconds', { ...web, status: 'pending' })).toBe(0)
    expect(sampleValue(before, 'tracklet_store_writable')).toBe(1)

    const gone = track({ event: 'Gone' })
    const busy = track({ event: 'Busy' })
    const answer = await post(`${relay.url}/v1/batch`, {
      batch: [
        track(),
        track(),
        gone,
        busy,
        { type: 'track', event: 'No user' },
        track({ properties: { blob: 'x'.repeat(33_000) } }),
      ],
    })
    expect(answer.body).toMatchObject({ accepted: 4, refused: [{ index: 4 }, { index: 5 }] })
    expect((await post(`${relay.url}/v1/track`, track(), { authorization: basic('wk-wrong') })).status).toBe(401)
    expect((await post(`${relay.url}/v1/batch`, '{"batch": [')).status).toBe(400)

    // Two delivered, one dead-lettered, one waiting for its Retry-After.
    await waitFor(async () => {
      const { deliveries } = (await adminGet(`${relay.url}/v1/deliveries`)).body as { deliveries: any[] }
      const settled = deliveries.filter((d) => d.status !== 'pending' || d.attempts.length > 0)
      return settled.length === 4 ? true : undefined
    }, 'every delivery to be attempted once')

    const after = await scrape()
    expect(sampleValue(after, 'tracklet_messages_ingested_total', web)).toBe(4)
    expect(sampleValue(after, 'tracklet_messages_refused_total', { ...web, reason: 'invalid' })).toBe(1)
    expect(sampleValue(after, 'tracklet_messages_refused_total', { ...web, reason: 'too_large' })).toBe(1)
    expect(sampleValue(after, 'tracklet_ingest_requests_refused_total', { reason: 'unauthorized' })).toBe(1)
    expect(sampleValue(after, 'tracklet_ingest_requests_refused_total', { reason: 'malformed_json' })).toBe(1)
    expect(sampleValue(after, 'tracklet_delivery_attempts_total', { ...webhooks, outcome: 'delivered' })).toBe(2)
    expect(sampleValue(after, 'tracklet_delivery_attempts_total', { ...webhooks, outcome: 'retried' })).toBe(1)
    expect(sampleValue(after, 'tracklet_delivery_attempts_total', { ...webhooks, outcome: 'dead_lettered' })).toBe(1)
    expect(sampleValue(after, 'tracklet_delivery_attempt_duration_seconds_count', webhooks)).toBe(4)
    expect(sampleValue(after, 'tracklet_delivery_attempt_duration_seconds_bucket', { ...webhooks, le: '+Inf' })).toBe(4)
    expect(sampleValue(after, 'tracklet_delivery_attempt_duration_seconds_sum', webhooks)).toBeGreaterThan(0)
    expect(sampleValue(after, 'tracklet_outbox_deliveries', { ...web, status: 'pending' })).toBe(1)
    expect(sampleValue(after, 'tracklet_outbox_deliveries', { ...web, status: 'failed' })).toBe(1)
    expect(sampleValue(after, 'tracklet_outbox_oldest_age_seconds', { ...web, status: 'pending' })).toBeGreaterThan(0)

    // Retrying the dead letter by hand takes it out of the failed gauge and into pending.
    const failed = (await adminGet(`${relay.url}/v1/deliveries?status=failed`)).body.deliveries[0]
    expect(failed.messageId).toBe(gone['messageId'])
    receiver.respond((_req, res) => res.writeHead(200).end('ok'))
    await post(`${relay.url}/v1/deliveries/${failed.id}/retry`, {}, { authorization: `Bearer ${ADMIN_TOKEN}` })
    await waitFor(async () => {
      const samples = await scrape()
      return sampleValue(samples, 'tracklet_delivery_attempts_total', { ...webhooks, outcome: 'delivered' }) === 3
        ? samples
        : undefined
    }, 'the retried delivery to be delivered')
    const last = await scrape()
    expect(sampleValue(last, 'tracklet_outbox_deliveries', { ...web, status: 'failed' })).toBe(0)
    expect(sampleValue(last, 'tracklet_outbox_deliveries', { ...web, status: 'pending' })).toBe(1)
  })

  it("includes the process's own metrics", async () => {
    const samples = await scrape()
    expect(sampleValue(samples, 'process_cpu_user_seconds_total')).toBeGreaterThan(0)
    expect(sampleValue(samples, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0)
  })

  it('keeps the counts of two relays in one process apart', async () => {
    const other = await startRelay(receiver.url, { adminToken: 'other-admin' })
    others.push(other)
    expect((await post(`${relay.url}/v1/track`, track())).status).toBe(200)
    expect(sampleValue(await scrape(), 'tracklet_messages_ingested_total', web)).toBe(1)
    expect(sampleValue(await scrape(other.url, 'other-admin'), 'tracklet_messages_ingested_total', web)).toBe(0)
  })

  it('answers 401 without the metrics token or the admin token, and reads with either', async () => {
    const status = async (headers: Record<string, string>) =>
      (await request(`${relay.url}/metrics`, { headers })).statusCode
    expect(await status({})).toBe(401)
    expect(await status({ authorization: 'Bearer wrong' })).toBe(401)
    expect(await status({ authorization: basic(WRITE_KEY) })).toBe(401)
    expect(await status({ authorization: `Bearer ${METRICS_TOKEN}` })).toBe(200)
    expect(await status({ authorization: `Bearer ${ADMIN_TOKEN}` })).toBe(200)
    // The metrics token opens nothing else.
    const log = await request(`${relay.url}/v1/deliveries`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
    expect(log.statusCode).toBe(401)
    await log.body.dump()
  })

  it('is closed when the relay has neither token', async () => {
    const closed = await startRelay(receiver.url, { adminToken: undefined })
    others.push(closed)
    const response = await request(`${closed.url}/metrics`)
    expect(response.statusCode).toBe(401)
    expect(await response.body.json()).toMatchObject({ error: { message: expect.stringMatching(/metricsToken/) } })
  })

  it('refuses a metricsToken that is not a non-empty string, without showing it', async () => {
    await expect(
      createRelay({ sources: [{ name: 'web', writeKey: 'k' }], metricsToken: '' as string }),
    ).rejects.toThrow(new RelayConfigError('metricsToken', 'must be a non-empty string, got string'))
    await expect(
      createRelay({ sources: [{ name: 'web', writeKey: 'k' }], metricsToken: 42 as unknown as string }),
    ).rejects.toThrow('metricsToken: must be a non-empty string, got number')
  })
})

describe('RelayMetrics', () => {
  it('counts messages filtered by a source’s schema', async () => {
    const store = await openSqliteStore(':memory:')
    try {
      const metrics = new RelayMetrics({
        store,
        sources: [{ name: 'web', destinations: ['Webhooks'] }],
        health: new StoreHealth({ probe: async () => {} }),
      })
      const filtered = async () =>
        sampleValue(parseExposition((await metrics.scrape()).text), 'tracklet_messages_filtered_total', web)
      expect(await filtered()).toBe(0)
      metrics.filtered('web')
      metrics.filtered('web', 2)
      expect(await filtered()).toBe(3)
    } finally {
      await store.close()
    }
  })
})
