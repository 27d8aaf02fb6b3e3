import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { request } from 'undici'
import type { Relay } from '../../../src/relay/index'
import { addLogSink, type LogEvent, useLogLevel } from '../../../src/relay/log'
import { basic, post, type Receiver, startReceiver, startRelay, track, waitFor } from '../helpers'
import { api, newSecretsKey } from './api-client'

const READ_TOKEN = 'read-token-unseen-0123456789'
// Every secret a client gives through the API, each written where it could leak.
const SECRETS = {
  given: 'given-write-key-unseen-7777',
  refused: 'refused-write-key-unseen-8888',
  shared: 'shared-secret-unseen-9999',
  header: 'header-value-unseen-aaaa',
  badHeader: 'bad-header-value-unseen-bbbb',
}

describe('secrets given through the admin API', () => {
  let receiver: Receiver
  let relay: Relay
  const events: LogEvent[] = []
  let stop: (() => void)[] = []

  beforeEach(async () => {
    stop = [addLogSink((event) => events.push(event)), useLogLevel('debug')]
    receiver = await startReceiver()
    relay = await startRelay(receiver.url, { secretsKey: newSecretsKey(), readToken: READ_TOKEN })
  })
  afterEach(async () => {
    await relay.close()
    await receiver.close()
    for (const undo of stop) undo()
    events.length = 0
  })

  it('appear in no answer, no audit entry and no log line', async () => {
    const answers: string[] = []
    const call = async (...args: Parameters<typeof api>) => {
      const answer = await api(...args)
      answers.push(answer.text)
      return answer
    }
    const webhooks = [{ url: receiver.url, headers: { 'X-Api-Key': SECRETS.header } }]
    // Refused: a bad URL beside a header value with a line break, a key named.
    await call(relay.url, 'PUT', '/v1/sources/shop', {
      writeKey: SECRETS.refused,
      destinations: { Webhooks: { webhooks: [{ url: 'nope', headers: { 'X-Bad': `${SECRETS.badHeader}\r\n` } }] } },
    })
    await call(relay.url, 'PUT', '/v1/sources/shop', {
      writeKey: SECRETS.given,
      destinations: { Webhooks: { webhooks, sharedSecret: SECRETS.shared } },
    })
    await call(relay.url, 'PUT', '/v1/sources/shop', {
      destinations: { Webhooks: { webhooks: [{ url: receiver.url }], sharedSecret: '***' } },
    })
    await call(relay.url, 'PUT', '/v1/sources/shop', {
      writeKey: SECRETS.given,
      destinations: { Webhooks: { webhooks, sharedSecret: '***' } },
    })
    receiver.respond((_req, res) => res.writeHead(503).end())
    await post(`${relay.url}/v1/batch`, { batch: [track()] }, { authorization: basic(SECRETS.given) })
    await post(`${relay.url}/v1/batch`, { batch: [track()] }, { authorization: basic(SECRETS.refused) })
    await waitFor(() => receiver.received[0], 'a failed attempt')
    await call(relay.url, 'GET', '/v1/sources')
    await call(relay.url, 'GET', '/v1/sources/shop')
    await call(relay.url, 'GET', '/v1/deliveries')
    const audit = await call(relay.url, 'GET', '/v1/audit')
    expect(audit.body.entries.length, answers.join('\n')).toBeGreaterThanOrEqual(3)

    const logged = events.map((event) => JSON.stringify(event)).join('\n')
    expect(logged).toContain('shop') // the log did see the source's work
    for (const secret of Object.values(SECRETS)) {
      for (const answer of answers) expect(answer).not.toContain(secret)
      expect(logged).not.toContain(secret)
    }
  })

  it('lets the read token read the stream and the metrics', async () => {
    const metrics = await request(`${relay.url}/metrics`, { headers: { authorization: `Bearer ${READ_TOKEN}` } })
    await metrics.body.dump()
    expect(metrics.statusCode).toBe(200)
    const controller = new AbortController()
    const stream = await request(`${relay.url}/v1/stream`, {
      headers: { authorization: `Bearer ${READ_TOKEN}` },
      signal: controller.signal,
    })
    expect(stream.statusCode).toBe(200)
    controller.abort()
    await stream.body.dump().catch(() => {})
  })
})
