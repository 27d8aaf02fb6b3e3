import { readFileSync } from 'node:fs'
import { request } from 'undici'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Relay } from '../../../src/relay/index'
import { statusClass } from '../../../src/relay/telemetry/console-metrics'
import { LIBRARY_VERSION } from '../../../src/shared/version'
import { ADMIN_TOKEN, basic, post, type Receiver, startReceiver, startRelay, track, waitFor } from '../helpers'
import { parseExposition, type Sample, sampleValue } from './prometheus'

let receiver: Receiver
let relay: Relay

beforeEach(async () => {
  receiver = await startReceiver()
  // By the event's name: a 404 (dead-lettered at once), a dropped connection (no answer), or 200.
  receiver.respond((req, res) => {
    const event = receiver.received.at(-1)?.body['event']
    if (event === 'Gone') res.writeHead(404).end()
    else if (event === 'Drop') req.socket.destroy()
    else res.writeHead(200).end('ok')
  })
  relay = await startRelay(receiver.url)
})
afterEach(async () => {
  await relay.close()
  await receiver.close()
})

async function scrape(): Promise<Sample[]> {
  const response = await request(`${relay.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
  return parseExposition(await response.body.text())
}

const webhooks = { source: 'web', destination: 'Webhooks' }

describe('the console metrics (issue 20)', () => {
  it('times ingest requests by the status answered', async () => {
    const before = await scrape()
    expect(sampleValue(before, 'tracklet_ingest_request_duration_seconds_count', { status: '200' })).toBeUndefined()

    expect((await post(`${relay.url}/v1/batch`, { batch: [track()] })).status).toBe(200)
    expect((await post(`${relay.url}/v1/track`, track())).status).toBe(200)
    expect((await post(`${relay.url}/v1/track`, track(), { authorization: basic('wk-wrong') })).status).toBe(401)
    expect((await post(`${relay.url}/v1/batch`, '{"batch": [')).status).toBe(400)
    // Not ingest: not timed as such.
    expect((await request(`${relay.url}/healthz`)).statusCode).toBe(200)

    const after = await scrape()
    const count = (status: string) => sampleValue(after, 'tracklet_ingest_request_duration_seconds_count', { status })
    expect(count('200')).toBe(2)
    expect(count('401')).toBe(1)
    expect(count('400')).toBe(1)
    expect(sampleValue(after, 'tracklet_ingest_request_duration_seconds_bucket', { status: '200', le: '+Inf' })).toBe(2)
  })

  it("counts webhook requests by the class of the receiver's answer", async () => {
    const before = await scrape()
    for (const status_class of ['2xx', '3xx', '4xx', '5xx', 'error'])
      expect(sampleValue(before, 'tracklet_webhook_requests_total', { ...webhooks, status_class })).toBe(0)

    await post(`${relay.url}/v1/batch`, {
      batch: [track(), track({ event: 'Gone' }), track({ event: 'Drop' })],
    })
    const after = await waitFor(async () => {
      const samples = await scrape()
      const value = (status_class: string) =>
        sampleValue(samples, 'tracklet_webhook_requests_total', { ...webhooks, status_class }) ?? 0
      return value('2xx') === 1 && value('4xx') === 1 && value('error') >= 1 ? samples : undefined
    }, 'the three attempts to be counted')
    expect(sampleValue(after, 'tracklet_webhook_requests_total', { ...webhooks, status_class: '5xx' })).toBe(0)
    expect(sampleValue(after, 'tracklet_webhook_requests_total', { ...webhooks, status_class: '3xx' })).toBe(0)
  })

  it('says which version runs', async () => {
    const samples = await scrape()
    expect(sampleValue(samples, 'tracklet_build_info', { version: LIBRARY_VERSION })).toBe(1)
    expect(samples.filter((s) => s.name === 'tracklet_build_info')).toHaveLength(1)
  })

  it('classes statuses, and no answer as error', () => {
    expect([200, 204, 301, 404, 429, 500, 503, undefined, 0, 99, 600].map(statusClass)).toEqual([
      '2xx',
      '2xx',
      '3xx',
      '4xx',
      '4xx',
      '5xx',
      '5xx',
      'error',
      'error',
      'error',
      'error',
    ])
  })
})

describe('docs/operations.md', () => {
  it("lists every one of the relay's own metric families in its metrics table, and no other", async () => {
    // On PostgreSQL, which has every family (the clock offset too). Every family, with samples or
    // not yet (a histogram before its first observation).
    const onPostgres = await startRelay(receiver.url, {}, 'postgres')
    let text: string
    try {
      const response = await request(`${onPostgres.url}/metrics`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      })
      text = await response.body.text()
    } finally {
      await onPostgres.close()
    }
    const families = new Set([...text.matchAll(/^# TYPE (tracklet_\w+) /gm)].map((m) => m[1]!))
    const doc = readFileSync(new URL('../../../docs/operations.md', import.meta.url), 'utf8')
    const documented = new Set([...doc.matchAll(/^\| `(tracklet_[a-z_]+)`/gm)].map((m) => m[1]!))
    expect([...families].sort()).toEqual([...documented].sort())
  })
})
