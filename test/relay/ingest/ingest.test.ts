import { connect } from 'node:net'
import { describe, expect, it } from 'vitest'
import { adminGet, basic, post, track, waitFor, WRITE_KEY } from '../helpers'
import { STORE_KINDS } from '../../support/stores'
import { postBytes } from './ingest-helpers'
import { useRelayWithReceiver } from '../fixtures/relay'

describe.each(STORE_KINDS)('on the %s store', (kind) => {
  const running = useRelayWithReceiver(kind)

  describe('POST /v1/batch', () => {
    it('accepts a batch, answers once it is stored, and delivers each message to the webhook', async () => {
      const messages = [
        track({ messageId: 'a' }),
        { type: 'identify', userId: 'u1', traits: { plan: 'pro' }, messageId: 'b' },
      ]
      const answer = await post(`${running.relay.url}/v1/batch`, { batch: messages, sentAt: new Date().toISOString() })
      expect(answer).toEqual({ status: 200, body: { success: true, accepted: 2, refused: [] } })
      await waitFor(() => (running.receiver.received.length === 2 ? true : undefined))
      expect(running.receiver.received.map((r) => r.body['messageId']).sort()).toEqual(['a', 'b'])
      expect(running.receiver.received.find((r) => r.body['type'] === 'identify')?.body['traits']).toEqual({
        plan: 'pro',
      })
    })

    it('refuses an unknown write key, or none, with 401', async () => {
      expect(
        (await post(`${running.relay.url}/v1/batch`, { batch: [track()] }, { authorization: basic('nope') })).status,
      ).toBe(401)
      const none = await post(`${running.relay.url}/v1/batch`, { batch: [track()] }, {})
      expect(none.status).toBe(401)
      expect(none.body.error.message).toMatch(/Basic/)
      expect((await adminGet(`${running.relay.url}/v1/deliveries`)).body.deliveries).toEqual([])
    })

    it('refuses malformed JSON with 400 saying what is wrong', async () => {
      const answer = await post(`${running.relay.url}/v1/batch`, '{"batch": [', { authorization: basic(WRITE_KEY) })
      expect(answer.status).toBe(400)
      expect(answer.body.error.code).toBe('ERR_MALFORMED_JSON')
      expect(answer.body.error.message).toMatch(/not valid JSON/)
    })

    it('refuses a body without a batch array', async () => {
      const answer = await post(`${running.relay.url}/v1/batch`, { messages: [] })
      expect(answer.status).toBe(400)
      expect(answer.body.error.message).toMatch(/batch is missing or not an array/)
    })

    // The contract changed (issue 9): clients in the wild send JSON under text/plain or a form type,
    // so the body is JSON whatever the Content-Type says; it used to be refused with 415.
    it.each(['text/plain', 'application/x-www-form-urlencoded', 'application/octet-stream', undefined])(
      'parses the body as JSON whatever the Content-Type (%s)',
      async (contentType) => {
        const messageId = `ct-${String(contentType).replace(/\W/g, '')}`
        const answer = await postBytes(
          `${running.relay.url}/v1/batch`,
          JSON.stringify({ batch: [track({ messageId })] }),
          {
            'content-type': contentType,
          },
        )
        expect(answer).toEqual({ status: 200, body: { success: true, accepted: 1, refused: [] } })
        await waitFor(() => running.receiver.received.find((r) => r.body['messageId'] === messageId))
      },
    )

    it('refuses a form-encoded body (not JSON) under a form type with 400 malformed JSON', async () => {
      const answer = await postBytes(`${running.relay.url}/v1/batch`, 'batch=1&event=x', {
        'content-type': 'application/x-www-form-urlencoded',
      })
      expect(answer.status).toBe(400)
      expect(answer.body.error.code).toBe('ERR_MALFORMED_JSON')
    })

    it('refuses deeply nested JSON with 400 before parsing it', async () => {
      const deep = `{"batch":[{"type":"track","userId":"u","event":"e","properties":${'{"a":'.repeat(100)}1${'}'.repeat(100)}}]}`
      const answer = await post(`${running.relay.url}/v1/batch`, deep)
      expect(answer.status).toBe(400)
      expect(answer.body.error.code).toBe('ERR_JSON_TOO_DEEP')
      // Brackets inside strings are not nesting.
      const stringy = await post(`${running.relay.url}/v1/batch`, {
        batch: [track({ properties: { text: '[[[['.repeat(100) } })],
      })
      expect(stringy.body.accepted).toBe(1)
    })

    it('refuses invalid and oversized messages on their own and accepts the valid rest', async () => {
      const batch = [
        track({ messageId: 'ok-1' }),
        { type: 'track', userId: 'u1' },
        track({ properties: { blob: 'x'.repeat(32_000) } }),
        { type: 'launch', userId: 'u1' },
        track({ messageId: 'ok-2' }),
      ]
      const answer = await post(`${running.relay.url}/v1/batch`, { batch })
      expect(answer.status).toBe(200)
      expect(answer.body.accepted).toBe(2)
      expect(answer.body.refused).toEqual([
        { index: 1, reason: 'track needs event' },
        { index: 2, reason: expect.stringMatching(/over the 32000-byte limit/) },
        { index: 3, reason: expect.stringMatching(/^type must be one of/) },
      ])
      await waitFor(() => (running.receiver.received.length === 2 ? true : undefined))
      expect(running.receiver.received.map((r) => r.body['messageId']).sort()).toEqual(['ok-1', 'ok-2'])
    })

    it('answers 400 when every message of the batch is refused', async () => {
      const answer = await post(`${running.relay.url}/v1/batch`, { batch: [{ type: 'track' }] })
      expect(answer.status).toBe(400)
      expect(answer.body).toMatchObject({ success: false, accepted: 0, refused: [{ index: 0 }] })
    })

    it('refuses a body over 500,000 bytes with 413 from its Content-Length, reading none of it', async () => {
      const { head, rest } = await rawRequest(running.relay.url, [
        'POST /v1/batch HTTP/1.1',
        'Host: relay',
        `Authorization: ${basic(WRITE_KEY)}`,
        'Content-Type: application/json',
        'Content-Length: 5000000',
        '',
        '{"batch":[',
      ])
      expect(head).toMatch(/^HTTP\/1.1 413/)
      expect(rest).toMatch(/500000-byte limit/)
    })

    it('stops reading a chunked body with 413 as soon as it crosses 500,000 bytes', async () => {
      const socket = connect(Number(new URL(running.relay.url).port), '127.0.0.1')
      let answer = ''
      // How the connection ended, if it did: an error's code, or 'closed'.
      let ended: string | undefined
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString()))
      socket.on('error', (error: NodeJS.ErrnoException) => (ended ??= error.code))
      socket.on('close', () => (ended ??= 'closed'))
      socket.write(
        [
          `POST /v1/batch HTTP/1.1`,
          'Host: relay',
          `Authorization: ${basic(WRITE_KEY)}`,
          'Content-Type: application/json',
          'Transfer-Encoding: chunked',
          '',
          '',
        ].join('\r\n'),
      )
      const chunk = 'x'.repeat(100_000)
      let sent = 0
      // Send until the answer comes or the connection ends; a relay that buffered everything would
      // do neither before the end.
      while (answer === '' && ended === undefined && sent < 5_000_000) {
        socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`)
        sent += chunk.length
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
      await waitFor(() => (answer.includes('limit') || ended !== undefined ? true : undefined))
      socket.destroy()
      expect(sent).toBeLessThan(5_000_000)
      // The relay answers 413 and closes with the rest of the body unread, so TCP resets the
      // connection; a reset that reaches this client before it has read the answer discards it
      // (seen in CI, where this client writes on into the reset: EPIPE). Either way the relay
      // stopped reading long before the end of the body.
      if (answer !== '') expect(answer).toMatch(/^HTTP\/1.1 413/)
      else expect(['ECONNRESET', 'EPIPE']).toContain(ended)
    })
  })

  describe('single-call paths', () => {
    it.each(['identify', 'track', 'page', 'screen', 'group', 'alias'])(
      'POST /v1/%s accepts one message of that type',
      async (type) => {
        const fields: Record<string, unknown> = { userId: 'u1', messageId: `single-${type}` }
        if (type === 'track') fields['event'] = 'Clicked'
        if (type === 'group') fields['groupId'] = 'g1'
        if (type === 'alias') fields['previousId'] = 'anon'
        const answer = await post(`${running.relay.url}/v1/${type}`, fields)
        expect(answer.status).toBe(200)
        expect(answer.body.accepted).toBe(1)
        const delivered = await waitFor(() =>
          running.receiver.received.find((r) => r.body['messageId'] === `single-${type}`),
        )
        expect(delivered.body['type']).toBe(type)
      },
    )

    it('refuses a message whose type is not the path', async () => {
      const answer = await post(`${running.relay.url}/v1/track`, { type: 'identify', userId: 'u1' })
      expect(answer.status).toBe(400)
      expect(answer.body.error.message).toMatch(/sent to \/v1\/track/)
    })

    it('fills in a missing messageId and timestamp', async () => {
      const before = Date.now()
      expect((await post(`${running.relay.url}/v1/track`, { userId: 'u1', event: 'E' })).status).toBe(200)
      const { body } = await waitFor(() => running.receiver.received[0])
      expect(body['messageId']).toMatch(/^[0-9a-f-]{36}$/)
      expect(Date.parse(body['timestamp'] as string)).toBeGreaterThanOrEqual(before - 1000)
    })
  })

  describe('storage', () => {
    it('has the deliveries committed when it answers (the log shows them before any delivery)', async () => {
      running.receiver.respond(() => {}) // never answers: nothing can be delivered
      await post(`${running.relay.url}/v1/batch`, {
        batch: [track({ messageId: 'stored-1' }), track({ messageId: 'stored-2' })],
      })
      const { body } = await adminGet(`${running.relay.url}/v1/deliveries`)
      // The log is newest first.
      expect(body.deliveries.map((d: any) => [d.messageId, d.status])).toEqual([
        ['stored-2', 'pending'],
        ['stored-1', 'pending'],
      ])
    })

    it('stores a message sent twice (a client retry) only once', async () => {
      await post(`${running.relay.url}/v1/batch`, { batch: [track({ messageId: 'twice' })] })
      await post(`${running.relay.url}/v1/batch`, { batch: [track({ messageId: 'twice' })] })
      const { body } = await adminGet(`${running.relay.url}/v1/deliveries`)
      expect(body.deliveries.filter((d: any) => d.messageId === 'twice')).toHaveLength(1)
    })
  })

  /** Sends raw request lines and returns the answer's status line and the rest. */
  async function rawRequest(relayUrl: string, lines: string[]): Promise<{ head: string; rest: string }> {
    const socket = connect(Number(new URL(relayUrl).port), '127.0.0.1')
    let answer = ''
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()))
    socket.write(lines.join('\r\n'))
    await new Promise((resolve) => socket.once('close', resolve))
    const [head = '', ...rest] = answer.split('\r\n')
    return { head, rest: rest.join('\n') }
  }
})
