import { format } from 'node:util'
import { gzipSync } from 'node:zlib'
import createDebug from 'debug'
import { describe, expect, it } from 'vitest'
import { useLogLevel } from '../../../src/relay/log'
import { adminGet, basic, track, waitFor, WRITE_KEY } from '../helpers'
import { postBytes } from './ingest-helpers'
import { useRelayWithReceiver } from '../fixtures/relay'

const running = useRelayWithReceiver('sqlite')

const noAuth = { authorization: undefined }
const body = (value: unknown): string => JSON.stringify(value)

describe('the write key in the body', () => {
  it('authenticates a batch with no Authorization header by its writeKey field', async () => {
    const answer = await postBytes(
      `${running.relay.url}/v1/batch`,
      body({ batch: [track({ messageId: 'in-body' })], writeKey: WRITE_KEY }),
      noAuth,
    )
    expect(answer).toEqual({ status: 200, body: { success: true, accepted: 1, refused: [] } })
    await waitFor(() => running.receiver.received.find((r) => r.body['messageId'] === 'in-body'))
  })

  it('reads it from a compressed body too', async () => {
    const gzipped = gzipSync(body({ batch: [track({ messageId: 'in-gzip' })], writeKey: WRITE_KEY }))
    const answer = await postBytes(`${running.relay.url}/v1/batch`, gzipped, { ...noAuth, 'content-encoding': 'gzip' })
    expect(answer.status).toBe(200)
  })

  it('authenticates a single call by its writeKey, and never stores, shows or forwards the key', async () => {
    const answer = await postBytes(
      `${running.relay.url}/v1/track`,
      body({ userId: 'u1', event: 'E', messageId: 'single-key', writeKey: WRITE_KEY }),
      noAuth,
    )
    expect(answer.status).toBe(200)
    const delivered = await waitFor(() => running.receiver.received.find((r) => r.body['messageId'] === 'single-key'))
    expect(delivered.raw).not.toContain(WRITE_KEY)
    const log = await adminGet(`${running.relay.url}/v1/deliveries`)
    expect(log.body.deliveries).toHaveLength(1)
    expect(JSON.stringify(log.body)).not.toContain(WRITE_KEY)
  })

  it.each([
    ['an unknown writeKey', { writeKey: 'not-a-key' }, /unknown write key/],
    ['no writeKey', {}, /Basic auth .* or, with no Authorization header, as the body's "writeKey"/],
    ['an empty writeKey', { writeKey: '' }, /writeKey/],
    ['a writeKey that is not a string', { writeKey: 42 }, /writeKey/],
  ])('refuses %s with 401 and stores nothing', async (_what, fields, message) => {
    const answer = await postBytes(`${running.relay.url}/v1/batch`, body({ batch: [track()], ...fields }), noAuth)
    expect(answer.status).toBe(401)
    expect(answer.body.error.code).toBe('ERR_UNAUTHORIZED')
    expect(answer.body.error.message).toMatch(message)
    expect((await adminGet(`${running.relay.url}/v1/deliveries`)).body.deliveries).toEqual([])
  })

  it('lets an Authorization header win: an unknown Basic key is 401 even with a valid writeKey in the body', async () => {
    const answer = await postBytes(`${running.relay.url}/v1/batch`, body({ batch: [track()], writeKey: WRITE_KEY }), {
      authorization: basic('not-a-key'),
    })
    expect(answer.status).toBe(401)
    const bearer = await postBytes(`${running.relay.url}/v1/batch`, body({ batch: [track()], writeKey: WRITE_KEY }), {
      authorization: 'Bearer something',
    })
    expect(bearer.status).toBe(401)
    expect(bearer.body.error.message).toMatch(/Authorization header is not that/)
  })

  it('refuses a bad Basic key with 401 before reading the body', async () => {
    // The body is not even JSON: it is never read, so the answer is about the key.
    const answer = await postBytes(`${running.relay.url}/v1/batch`, '{"batch": [', {
      authorization: basic('not-a-key'),
    })
    expect(answer.status).toBe(401)
  })

  it('never logs a write key sent in the body, known or not', async () => {
    const lines: string[] = []
    const previous = createDebug.log
    createDebug.log = (...args: unknown[]) => void lines.push(format(...args))
    createDebug.enable('tracklet:*')
    // Refusals and deliveries are one line each, at debug.
    const releaseLevel = useLogLevel('debug')
    try {
      await postBytes(
        `${running.relay.url}/v1/batch`,
        body({ batch: [track(), { type: 'track' }], writeKey: WRITE_KEY }),
        noAuth,
      )
      await postBytes(`${running.relay.url}/v1/batch`, body({ batch: [track()], writeKey: 'SECRET-GUESS' }), noAuth)
      await postBytes(`${running.relay.url}/v1/track`, body({ userId: 'u', writeKey: 'SECRET-GUESS' }), noAuth)
    } finally {
      releaseLevel()
      createDebug.log = previous
      createDebug.disable()
    }
    expect(lines.join('\n')).toMatch(/401/)
    expect(lines.join('\n')).not.toMatch(/SECRET|wk-test-web/)
  })
})
