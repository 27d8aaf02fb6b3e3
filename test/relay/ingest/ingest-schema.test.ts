import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { RelayConfigError, type Relay } from '../../../src/relay/index'
import { GroupCommit } from '../../../src/relay/ingest/group-commit'
import { ingest } from '../../../src/relay/ingest/ingest'
import { answerOf } from '../../../src/relay/ingest/routes'
import { validateRelayOptions } from '../../../src/relay/config/validate'
import { openSqliteStore } from '../../../src/relay/store/sqlite/sqlite-store'
import { adminGet, basic, post, type Receiver, startReceiver, startRelay, track, waitFor, WRITE_KEY } from '../helpers'

const source = { name: 'web', writeKey: 'wk-web' }

describe('sources[].schema.blockedEvents in the options', () => {
  it.each([
    [{ schema: [] }, 'sources[0].schema', 'must be an object, got an array'],
    [
      { schema: { blockedEvent: ['A'] } },
      'sources[0].schema.blockedEvent',
      'is not a schema rule (known: blockedEvents, plan, unplanned, violations)',
    ],
    [
      { schema: { blockedEvents: 'Order Completed' } },
      'sources[0].schema.blockedEvents',
      'must be an array of event names',
    ],
    [
      { schema: { blockedEvents: ['A', 42] } },
      'sources[0].schema.blockedEvents[1]',
      'must be a non-empty string, got number 42',
    ],
    [{ schema: { blockedEvents: [''] } }, 'sources[0].schema.blockedEvents[0]', 'must be a non-empty string'],
  ])('refuses %j naming the field', (fields, field, message) => {
    let error: unknown
    try {
      validateRelayOptions({ sources: [{ ...source, ...fields }] })
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(RelayConfigError)
    expect(error).toMatchObject({ code: 'ERR_RELAY_CONFIG', field })
    expect((error as Error).message).toContain(`${field}: ${message}`)
  })

  it('keeps a copy of the list, and defaults to none', () => {
    const blockedEvents = ['A']
    const resolved = validateRelayOptions({
      sources: [
        { ...source, schema: { blockedEvents } },
        { ...source, name: 'b', writeKey: 'k' },
      ],
    })
    blockedEvents.push('B')
    expect(resolved.sources[0]!.schema).toEqual({ blockedEvents: ['A'] })
    expect(resolved.sources[1]!.schema).toEqual({ blockedEvents: [] })
  })
})

describe('ingest of blocked track events', () => {
  it('counts a blocked track event as accepted and filtered, and writes no delivery for it', async () => {
    const store = await openSqliteStore(':memory:')
    try {
      const blocking = { name: 'web', destinations: ['Webhooks'], blockedEvents: new Set(['Blocked']) }
      const outcome = await ingest(new GroupCommit(store), blocking, [
        track({ messageId: 'b', event: 'Blocked' }),
        track({ messageId: 'ok', event: 'Allowed' }),
      ])
      expect(outcome).toEqual({ accepted: 2, refused: [], filtered: 1 })
      expect(answerOf(outcome)).toEqual({ success: true, accepted: 2, refused: [] })
      expect((await store.list({ after: 0, limit: 10 })).map((d) => d.messageId)).toEqual(['ok'])
    } finally {
      await store.close()
    }
  })
})

describe('blocked events through a relay', () => {
  let receiver: Receiver
  let relay: Relay
  beforeEach(async () => {
    receiver = await startReceiver()
    const Webhooks = { webhooks: [{ url: receiver.url }] }
    relay = await startRelay(receiver.url, {
      sources: [
        { name: 'web', writeKey: WRITE_KEY, destinations: { Webhooks }, schema: { blockedEvents: ['Blocked Event'] } },
        { name: 'ios', writeKey: 'wk-ios', destinations: { Webhooks } },
      ],
    })
  })
  afterEach(async () => {
    await receiver.close()
    await relay.close()
  })

  it('acknowledges a blocked track event but never delivers it; other names and call types pass', async () => {
    const answer = await post(`${relay.url}/v1/batch`, {
      batch: [
        track({ messageId: 'blocked', event: 'Blocked Event' }),
        track({ messageId: 'other-case', event: 'blocked event' }),
        track({ messageId: 'allowed', event: 'Allowed' }),
        { type: 'page', userId: 'u1', name: 'Blocked Event', messageId: 'page' },
        { type: 'screen', userId: 'u1', name: 'Blocked Event', messageId: 'screen' },
        { type: 'identify', userId: 'u1', traits: { event: 'Blocked Event' }, messageId: 'identify' },
        { type: 'track', event: 'Blocked Event' }, // invalid (no userId): refused, not filtered
      ],
    })
    expect(answer).toEqual({
      status: 200,
      body: { success: true, accepted: 6, refused: [{ index: 6, reason: 'track needs userId or anonymousId' }] },
    })
    // Deliveries are committed before the answer: the log is complete now.
    const { body } = await adminGet(`${relay.url}/v1/deliveries`)
    const logged = body.deliveries.map((d: any) => d.messageId).sort()
    expect(logged).toEqual(['allowed', 'identify', 'other-case', 'page', 'screen'])
    await waitFor(() => (receiver.received.length === 5 ? true : undefined))
    expect(receiver.received.map((r) => r.body['messageId'])).not.toContain('blocked')
  })

  it('answers 200 to a batch made only of blocked events', async () => {
    const answer = await post(`${relay.url}/v1/track`, { userId: 'u1', event: 'Blocked Event' })
    expect(answer).toEqual({ status: 200, body: { success: true, accepted: 1, refused: [] } })
    expect((await adminGet(`${relay.url}/v1/deliveries`)).body.deliveries).toEqual([])
  })

  it('blocks only for the source whose schema lists the event', async () => {
    await post(
      `${relay.url}/v1/track`,
      { userId: 'u1', event: 'Blocked Event', messageId: 'from-ios' },
      {
        authorization: basic('wk-ios'),
      },
    )
    await waitFor(() => receiver.received.find((r) => r.body['messageId'] === 'from-ios'))
  })
})
