import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Relay } from '../../../src/relay/index'
import { STORE_KINDS } from '../../support/stores'
import { admin, post, type Receiver, startReceiver, startRelay, track, waitForDelivery } from '../helpers'

const CODE = `
function onTrack(event, settings) {
  console.log('seen', event.messageId)
  if (event.properties && event.properties.internal) return null
  if (event.event === 'Boom') throw new Error('no plan given')
  event.properties = { ...event.properties, tag: settings.tag }
  return event
}`

// POST /v1/functions/test (docs/functions.md): the code run on events as a delivery would, nothing sent.
describe.each(STORE_KINDS)('POST /v1/functions/test (%s)', (store) => {
  let receiver: Receiver
  let relay: Relay
  beforeAll(async () => {
    receiver = await startReceiver()
    // No test here runs into functionTimeout: one a loaded machine's scheduling cannot meet.
    relay = await startRelay(receiver.url, { functionTimeout: 30_000 }, store)
  })
  afterAll(async () => {
    await relay.close()
    await receiver.close()
  })
  const test = (body: unknown, headers: Record<string, string> = admin) =>
    post(`${relay.url}/v1/functions/test`, body, headers)

  it('answers each given event: output, dropped or error, with its console lines and time', async () => {
    const events = [
      track({ messageId: 'm-out' }),
      track({ messageId: 'm-drop', properties: { internal: true } }),
      track({ messageId: 'm-boom', event: 'Boom' }),
      { type: 'identify', userId: 'u1', messageId: 'm-pass' },
    ]
    const { status, body } = await test({ code: CODE, settings: { tag: 'v2' }, events })
    expect(status).toBe(200)
    const [out, drop, boom, pass] = body.results
    expect(out).toMatchObject({
      input: events[0],
      output: { messageId: 'm-out', properties: { tag: 'v2' } },
      logs: ['seen m-out'],
    })
    expect(drop).toEqual({ input: events[1], dropped: true, logs: ['seen m-drop'], ms: expect.any(Number) })
    expect(boom).toMatchObject({ error: 'no plan given', logs: ['seen m-boom'] })
    expect(boom).not.toHaveProperty('output')
    // No handler for identify: it passes unchanged.
    expect(pass).toEqual({ input: events[3], output: events[3], logs: [], ms: expect.any(Number) })
    expect(receiver.received).toEqual([])
  })

  it("runs on a source's newest stored messages, newest first, `limit` of them", async () => {
    for (const id of ['m-s1', 'm-s2', 'm-s3']) {
      await post(`${relay.url}/v1/batch`, { batch: [track({ messageId: id })] })
      await waitForDelivery(relay.url, 'delivered', id)
    }
    const { status, body } = await test({ code: CODE, settings: { tag: 't' }, source: 'web', limit: 2 })
    expect(status).toBe(200)
    expect(body.results.map((r: any) => [r.input.messageId, r.output.properties.tag])).toEqual([
      ['m-s3', 't'],
      ['m-s2', 't'],
    ])
  })

  it('refuses code that does not compile with a 400 naming the problem, and bad bodies clearly', async () => {
    const broken = await test({ code: 'function onTrack( {', events: [track()] })
    expect(broken.status).toBe(400)
    expect(broken.body.error).toMatchObject({ code: 'ERR_FUNCTION_COMPILE' })
    expect(broken.body.error.message).toMatch(/does not compile: SyntaxError/)

    const both = await test({ code: CODE, events: [track()], source: 'web' })
    expect(both).toMatchObject({ status: 400, body: { error: { code: 'ERR_INVALID_FUNCTION_TEST' } } })
    expect(both.body.error.message).toMatch(/either "events".*or "source"/)
    const noCode = await test({ events: [track()] })
    expect(noCode.body.error.message).toMatch(/"code" must be/)
    const notMessages = await test({ code: CODE, events: [track(), 'x'] })
    expect(notMessages.body.error.message).toBe('events[1] must be an object (a message)')
    const badLimit = await test({ code: CODE, source: 'web', limit: 0 })
    expect(badLimit.body.error.message).toMatch(/"limit" must be an integer from 1 to 100/)
    const unknown = await test({ code: CODE, source: 'nowhere' })
    expect(unknown).toMatchObject({ status: 404, body: { error: { code: 'ERR_NO_STORED_MESSAGES' } } })
  })

  it('asks for the admin token', async () => {
    expect((await test({ code: CODE, events: [track()] }, {})).status).toBe(401)
  })
})
