import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { RelayConfigError, type Relay } from '../../../src/relay/index'
import { STORE_KINDS, throwawayDatabase } from '../../support/stores'
import { PageClient } from '../console/page-client'
import {
  adminGet,
  basic,
  post,
  type Receiver,
  startReceiver,
  startRelay,
  track,
  WRITE_KEY,
  waitFor,
  waitForDelivery,
} from '../helpers'

// A destination's function end to end (docs/functions.md): the relay, a real receiver, the delivery log.
describe.each(STORE_KINDS)('functions on a relay (%s)', (store) => {
  let relay: Relay | undefined
  let receiver: Receiver | undefined
  afterEach(async () => {
    await relay?.close()
    await receiver?.close()
    relay = undefined
    receiver = undefined
  })

  async function withFunction(code: string, extra: Record<string, unknown> = {}): Promise<Relay> {
    receiver = await startReceiver()
    relay = await startRelay(
      receiver.url,
      {
        sources: [
          {
            name: 'web',
            writeKey: WRITE_KEY,
            destinations: {
              Webhooks: { webhooks: [{ url: receiver.url }], function: { code }, functionSettings: { tag: 'v2' } },
            },
          },
        ],
        ...extra,
      },
      store,
    )
    return relay
  }

  const send = (message: Record<string, unknown>) => post(`${relay!.url}/v1/batch`, { batch: [message] })

  it('sends what the function returns, given functionSettings, and passes a type with no handler unchanged', async () => {
    await withFunction(
      'function onTrack(event, settings) { event.properties = { ...event.properties, tag: settings.tag }; return event }',
    )
    await send(track({ properties: { plan: 'pro' } }))
    await send({ type: 'identify', userId: 'u1', messageId: 'm-identify', traits: { name: 'Ada' } })
    await waitFor(() => receiver!.received.length === 2 || undefined, 'two webhooks')
    const byType = Object.fromEntries(receiver!.received.map((r) => [r.body['type'], r.body]))
    expect(byType['track']).toMatchObject({ properties: { plan: 'pro', tag: 'v2' } })
    expect(byType['identify']).toMatchObject({ traits: { name: 'Ada' } })
    expect(byType['identify']).not.toHaveProperty('properties')
  })

  it('ends a delivery the function drops as filtered, "dropped by function", and sends nothing', async () => {
    await withFunction('function transformEvent(event) { return event.properties.internal ? null : event }')
    await send(track({ messageId: 'm-dropped', properties: { internal: true } }))
    await send(track({ messageId: 'm-kept', properties: {} }))
    const filtered = await waitForDelivery(relay!.url, 'filtered', 'm-dropped')
    expect(filtered).toMatchObject({ status: 'filtered', lastError: 'dropped by function' })
    await waitForDelivery(relay!.url, 'delivered', 'm-kept')
    expect(receiver!.received.map((r) => r.body['messageId'])).toEqual(['m-kept'])
  })

  it('dead-letters a delivery whose function throws, with the message and the console lines', async () => {
    await withFunction(
      "function onTrack(event) { console.log('looking at', event.event); throw new Error('no plan given') }",
    )
    await send(track({ messageId: 'm-throws' }))
    const failed = await waitForDelivery(relay!.url, 'failed', 'm-throws')
    expect(failed.lastError).toContain('the function failed: no plan given')
    // The console lines are kept with the attempt (no request was made: no URL), not in the error.
    expect(failed.lastError).not.toContain('looking at')
    const { body } = await adminGet(`${relay!.url}/v1/deliveries/${failed.id}`)
    expect(body.attempts).toEqual([
      expect.objectContaining({ url: '', error: failed.lastError, console: ['looking at Signed Up'] }),
    ])
    expect(receiver!.received).toEqual([])
  })

  it("keeps a call's console lines with its attempt, capped, and shows them on the delivery's page", async () => {
    await withFunction(
      "function onTrack(event) { console.log('user', event.userId); for (let i = 0; i < 30; i++) console.info('line', i); return event }",
    )
    await send(track({ messageId: 'm-logged', userId: 'u-42' }))
    const delivered = await waitForDelivery(relay!.url, 'delivered', 'm-logged')
    const { body } = await adminGet(`${relay!.url}/v1/deliveries/${delivered.id}`)
    const [attempt] = body.attempts
    expect(attempt).toMatchObject({ url: receiver!.url, status: 200 })
    // 20 lines per call, then a line saying the rest was dropped.
    expect(attempt.console).toHaveLength(21)
    expect(attempt.console.slice(0, 2)).toEqual(['user u-42', 'info: line 0'])
    expect(attempt.console[20]).toMatch(/more console output dropped: 20 lines/)
    const client = new PageClient(relay!.url)
    await client.signIn()
    const page = (await client.get(`/ui/deliveries/${delivered.id}`)).body
    expect(page).toContain('Function console (21 lines)')
    expect(page).toContain('user u-42\ninfo: line 0\n')
  })

  it('shows a function that fails on most calls on the endpoints view, with its last error', async () => {
    await withFunction(
      "function onTrack(e) { if (e.event !== 'Fine') throw new Error('no plan for ' + e.event); return e }",
    )
    for (const event of ['A', 'B', 'Fine']) await send(track({ messageId: `m-${event}`, event }))
    await waitForDelivery(relay!.url, 'delivered', 'm-Fine')
    await waitForDelivery(relay!.url, 'failed', 'm-B')
    const { body } = await adminGet(`${relay!.url}/v1/endpoints`)
    expect(body.endpoints[0].functions).toEqual([
      {
        source: 'web',
        destination: 'Webhooks',
        calls: 3,
        failed: 2,
        lastError: { error: expect.stringMatching(/^no plan for [AB]$/), at: expect.any(String) },
      },
    ])
    const client = new PageClient(relay!.url)
    await client.signIn()
    const page = (await client.get('/ui/endpoints')).body
    expect(page).toMatch(/<div class="error">web's function: 2 of 3 calls failed \(5 min\)/)
  })

  it('retries a delivery whose function throws a RetryError on the usual schedule', async () => {
    await withFunction("function onTrack() { throw new RetryError('lookup service down') }")
    await send(track({ messageId: 'm-retry' }))
    const pending = await waitFor(async () => {
      const { body } = await adminGet(`${relay!.url}/v1/deliveries?status=pending`)
      return (body.deliveries as any[]).find((d) => d.messageId === 'm-retry' && d.lastError !== null)
    }, 'a retried delivery')
    expect(pending.lastError).toContain('lookup service down')
    expect(Date.parse(pending.nextAttemptAt)).toBeGreaterThan(Date.now())
    // The attempt the function ended is listed (no request: no URL), with its error.
    const { body } = await adminGet(`${relay!.url}/v1/deliveries/${pending.id}`)
    expect(body.attempts).toEqual([expect.objectContaining({ url: '', error: pending.lastError })])
    expect(body.attempts[0]).not.toHaveProperty('console')
  })

  it('lists the attempt of a delivery its function dropped, on the API and the page', async () => {
    // It prints nothing: the attempt is listed all the same.
    await withFunction('function onTrack() { return null }')
    await send(track({ messageId: 'm-gone' }))
    const filtered = await waitForDelivery(relay!.url, 'filtered', 'm-gone')
    const { body } = await adminGet(`${relay!.url}/v1/deliveries/${filtered.id}`)
    expect(body.attempts).toEqual([expect.objectContaining({ url: '', error: 'dropped by function' })])
    expect(body.attempts[0]).not.toHaveProperty('console')
    const client = new PageClient(relay!.url)
    await client.signIn()
    const page = (await client.get(`/ui/deliveries/${filtered.id}`)).body
    expect(page).not.toContain('No attempt yet.')
    expect(page).toContain('the function (no request)')
  })

  it('dead-letters a function that runs past functionTimeout with ERR_FUNCTION_TIMEOUT', async () => {
    await withFunction('function onTrack() { for (;;) {} }', { functionTimeout: 1_000 })
    await send(track({ messageId: 'm-loop' }))
    const failed = await waitForDelivery(relay!.url, 'failed', 'm-loop')
    expect(failed.lastError).toContain('ERR_FUNCTION_TIMEOUT')
  })

  it('dead-letters a memory blow-up with ERR_FUNCTION_MEMORY; the relay stays up and the next call runs', async () => {
    await withFunction(
      "function onTrack(e) { if (e.event === 'Blow up') { const a = []; for (;;) a.push('x'.repeat(1024) + a.length) } return e }",
      { functionMemory: 8, functionTimeout: 10_000 },
    )
    await send(track({ messageId: 'm-blow-up', event: 'Blow up' }))
    const failed = await waitForDelivery(relay!.url, 'failed', 'm-blow-up')
    expect(failed.lastError).toContain('ERR_FUNCTION_MEMORY')
    await send(track({ messageId: 'm-after' }))
    await waitForDelivery(relay!.url, 'delivered', 'm-after')
    expect((await adminGet(`${relay!.url}/healthz`)).status).toBe(200)
  })

  it("keeps delivering a second source's messages while one source's function loops", async () => {
    receiver = await startReceiver()
    relay = await startRelay(
      receiver.url,
      {
        functionTimeout: 5_000,
        sources: [
          {
            name: 'looping',
            writeKey: 'wk-looping',
            destinations: {
              Webhooks: { webhooks: [{ url: receiver.url }], function: { code: 'function onTrack() { for (;;) {} }' } },
            },
          },
          {
            name: 'web',
            writeKey: WRITE_KEY,
            destinations: {
              Webhooks: { webhooks: [{ url: receiver.url }], function: { code: 'function onTrack(e) { return e }' } },
            },
          },
        ],
      },
      store,
    )
    await post(
      `${relay.url}/v1/batch`,
      { batch: [track({ messageId: 'm-looping' })] },
      { authorization: basic('wk-looping') },
    )
    await waitFor(async () => {
      const { body } = await adminGet(`${relay!.url}/v1/deliveries?source=looping`)
      return body.deliveries.length === 1 || undefined
    }, 'the looping delivery taken in')
    for (let i = 0; i < 3; i++) await send(track({ messageId: `m-web-${i}` }))
    await waitFor(() => receiver!.received.length === 3 || undefined, "the other source's three webhooks")
    // Delivered while the loop still ran: its delivery has not settled yet.
    const looping = (await adminGet(`${relay.url}/v1/deliveries?source=looping`)).body.deliveries[0]
    expect(looping).toMatchObject({ status: 'pending', lastError: null })
    expect(receiver.received.map((r) => r.body['messageId']).sort()).toEqual(['m-web-0', 'm-web-1', 'm-web-2'])
  })
})

describe('a function in the config', () => {
  it('refuses code that does not compile, naming its path', async () => {
    const error = await startRelay('http://127.0.0.1:9/hook', {
      sources: [
        {
          name: 'web',
          writeKey: WRITE_KEY,
          destinations: {
            Webhooks: { webhooks: [{ url: 'http://127.0.0.1:9/hook' }], function: { code: 'function onTrack( {' } },
          },
        },
      ],
    }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(RelayConfigError)
    expect((error as RelayConfigError).field).toBe('sources[0].destinations.Webhooks.function.code')
    expect((error as Error).message).toMatch(/does not compile: SyntaxError/)
  })

  it('reads a function file, refusing one that cannot be read or does not compile by its path', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tracklet-fn-'))
    const broken = join(dir, 'broken.js')
    writeFileSync(broken, 'function onTrack(event) { return event')
    const missing = join(dir, 'missing.js')
    const error = await startRelay('http://127.0.0.1:9/hook', {
      database: await throwawayDatabase('sqlite'),
      sources: [
        {
          name: 'a',
          writeKey: 'wk-a',
          destinations: { Webhooks: { webhooks: [{ url: 'http://127.0.0.1:9/a' }], function: { file: broken } } },
        },
        {
          name: 'b',
          writeKey: 'wk-b',
          destinations: { Webhooks: { webhooks: [{ url: 'http://127.0.0.1:9/b' }], function: { file: missing } } },
        },
      ],
    }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(RelayConfigError)
    const problems = (error as RelayConfigError).problems.map((p) => `${p.field}: ${p.message}`).sort()
    expect(problems[0]).toMatch(
      /^sources\[0\]\.destinations\.Webhooks\.function\.file: .*broken\.js: the function does not compile/,
    )
    expect(problems[1]).toMatch(
      /^sources\[1\]\.destinations\.Webhooks\.function\.file: cannot read the function's file: ENOENT/,
    )
  })

  it('refuses a function that is neither { file } nor { code }, and functionSettings without a function', async () => {
    const error = await startRelay('http://127.0.0.1:9/hook', {
      sources: [
        {
          name: 'web',
          writeKey: WRITE_KEY,
          // @ts-expect-error a wrong shape on purpose
          destinations: { Webhooks: { webhooks: [{ url: 'http://127.0.0.1:9/hook' }], function: { path: 'f.js' } } },
        },
        {
          name: 'b',
          writeKey: 'wk-b',
          destinations: { Webhooks: { webhooks: [{ url: 'http://127.0.0.1:9/b' }], functionSettings: { a: 1 } } },
        },
      ],
    }).catch((e: unknown) => e)
    const fields = (error as RelayConfigError).problems.map((p) => p.field)
    expect(fields).toEqual([
      'sources[0].destinations.Webhooks.function',
      'sources[1].destinations.Webhooks.functionSettings',
    ])
  })
})
