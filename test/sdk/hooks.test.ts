import { afterEach, describe, expect, it } from 'vitest'
import { Analytics, type AnalyticsError, type Message } from '../../src/index'
import { type Receiver, startReceiver } from './helpers/receiver'
import { settled } from './helpers/settle'

let receiver: Receiver | undefined
let analytics: Analytics | undefined

afterEach(async () => {
  await analytics?.closeAndFlush({ timeout: 1000 })
  analytics = undefined
  await receiver?.close()
  receiver = undefined
})

async function client(options: ConstructorParameters<typeof Analytics>[1] = {}): Promise<Analytics> {
  const started = await startReceiver()
  receiver = started
  analytics = new Analytics('k', { endpoint: started.endpoint, ...options })
  return analytics
}

describe('beforeSend', () => {
  it('sends what it returns: a changed message, after validation and normalisation', async () => {
    const seen: Message[] = []
    const analytics = await client({
      beforeSend(message) {
        seen.push(structuredClone(message))
        const properties = { ...(message.properties as Record<string, unknown>) }
        delete properties['email']
        return { ...message, properties: { ...properties, hashed: true } }
      },
    })
    const properties = { email: 'a@b.co', plan: 'pro' }
    analytics.track({ userId: 'u', event: 'Signed Up', properties })
    await analytics.flush()
    // It saw the normalised message (id, timestamp, library), not the call's fields.
    expect(seen[0]).toMatchObject({
      type: 'track',
      messageId: expect.any(String),
      context: { library: { name: 'tracklet' } },
    })
    expect(receiver!.messages()[0]?.properties).toEqual({ plan: 'pro', hashed: true })
    // The caller's own object is untouched.
    expect(properties).toEqual({ email: 'a@b.co', plan: 'pro' })
  })

  it('drops a message it returns null or undefined for: ERR_FILTERED to the callback, no error event, stats().filtered', async () => {
    const analytics = await client({
      beforeSend: (message) => (message.type === 'track' && message.event === 'Noise' ? null : message),
    })
    const errors: AnalyticsError[] = []
    analytics.on('error', (error) => errors.push(error))
    const dropped = settled()
    analytics.track({ userId: 'u', event: 'Noise' }, dropped.callback)
    analytics.track({ userId: 'u', event: 'Signal' })
    await analytics.flush()
    expect((await dropped.result).err?.code).toBe('ERR_FILTERED')
    expect(errors).toEqual([])
    expect(receiver!.messages().map((message) => message.event)).toEqual(['Signal'])
    expect(analytics.stats()).toMatchObject({ delivered: 1, failed: 0, filtered: 1 })
  })

  it('fails a message with ERR_INVALID_MESSAGE when it throws (the cause kept) or returns an invalid one', async () => {
    const thrown = new Error('boom')
    const analytics = await client({
      beforeSend(message) {
        if (message.userId === 'throws') throw thrown
        if (message.userId === 'drops-event') return { ...message, event: undefined } as unknown as Message
        if (message.userId === 'changes-type') return { ...message, type: 'identify' }
        if (message.userId === 'too-big') return { ...message, properties: { pad: 'x'.repeat(40_000) } }
        return message
      },
    })
    const results = ['throws', 'drops-event', 'changes-type', 'too-big', 'fine'].map((userId) => {
      const { callback, result } = settled()
      analytics.track({ userId, event: 'E' }, callback)
      return result
    })
    await analytics.flush()
    const outcomes = await Promise.all(results)
    const [throws, dropsEvent, changesType, tooBig, fine] = outcomes.map(({ err }) => err)
    expect(throws).toMatchObject({ code: 'ERR_INVALID_MESSAGE', cause: thrown })
    expect(throws?.message).toMatch(/beforeSend threw: boom/)
    expect(dropsEvent?.message).toMatch(/after beforeSend: .*event/)
    expect(changesType?.message).toMatch(/changed the message's type from track to "identify"/)
    expect(tooBig?.code).toBe('ERR_MESSAGE_TOO_LARGE')
    expect(fine).toBeUndefined()
    expect(receiver!.messages().map((message) => message.userId)).toEqual(['fine'])
    expect(analytics.stats()).toMatchObject({ delivered: 1, failed: 4, filtered: 0 })
  })

  it('is refused at construction when it is not a function', () => {
    expect(() => new Analytics('k', { beforeSend: 'yes' as never })).toThrow(/beforeSend must be a function, got "yes"/)
  })
})

describe('context', () => {
  it("is merged under each call's context: the call's keys win, context.library is still added", async () => {
    const analytics = await client({ context: { app: { name: 'shop' }, locale: 'en-GB' } })
    analytics.track({ userId: 'u', event: 'E', context: { locale: 'fr-FR', ip: '203.0.113.9' } })
    analytics.identify({ userId: 'u' })
    await analytics.flush()
    const [track, identify] = receiver!.messages()
    expect(track?.context).toEqual({
      app: { name: 'shop' },
      locale: 'fr-FR',
      ip: '203.0.113.9',
      library: { name: 'tracklet', version: expect.any(String) },
    })
    expect(identify?.context).toMatchObject({ app: { name: 'shop' }, locale: 'en-GB' })
  })

  it('is refused at construction when it is not an object', () => {
    expect(() => new Analytics('k', { context: [] as never })).toThrow(/context must be an object/)
  })
})

describe('ids given as String objects', () => {
  it('are sent as their strings, as classic analytics-node sends them', async () => {
    const analytics = await client()
    // A String object, not a string: that is the point.
    const userId = new String('42') as unknown as string
    const { callback, result } = settled()
    analytics.group({ userId, groupId: new String('acme') as unknown as string }, callback)
    await analytics.flush()
    expect((await result).err).toBeUndefined()
    expect(receiver!.messages()[0]).toMatchObject({ userId: '42', groupId: 'acme' })
  })
})
