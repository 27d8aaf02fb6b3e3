import { PassThrough } from 'node:stream'
import { brotliCompressSync, constants, deflateSync, gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { createDecoder } from '../../../src/relay/http/content-encoding'
import { readLimited } from '../../../src/relay/http/read-body'
import { MAX_BATCH_BYTES } from '../../../src/shared/limits'
import { adminGet, track, waitFor } from '../helpers'
import { postBytes } from './ingest-helpers'
import { useRelayWithReceiver } from '../fixtures/relay'

const running = useRelayWithReceiver('sqlite')

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value))

const encoders: Record<string, (data: Buffer) => Buffer> = {
  gzip: gzipSync,
  'x-gzip': gzipSync,
  GZIP: gzipSync,
  deflate: deflateSync,
  br: brotliCompressSync,
  identity: (data) => data,
  'identity, gzip': gzipSync,
}

describe('Content-Encoding', () => {
  it.each(Object.keys(encoders))('decodes a %s body and delivers its messages', async (encoding) => {
    const messageId = `enc-${encoding.replace(/\W/g, '')}`
    const body = encoders[encoding]!(json({ batch: [track({ messageId })] }))
    const answer = await postBytes(`${running.relay.url}/v1/batch`, body, { 'content-encoding': encoding })
    expect(answer).toEqual({ status: 200, body: { success: true, accepted: 1, refused: [] } })
    const delivered = await waitFor(() => running.receiver.received.find((r) => r.body['messageId'] === messageId))
    expect(delivered.body['event']).toBe('Signed Up')
  })

  it.each(['compress', 'zstd', 'gzip, br'])(
    'refuses Content-Encoding %s with 415 naming the encodings accepted',
    async (encoding) => {
      const answer = await postBytes(`${running.relay.url}/v1/batch`, json({ batch: [track()] }), {
        'content-encoding': encoding,
      })
      expect(answer.status).toBe(415)
      expect(answer.body.error.code).toBe('ERR_CONTENT_ENCODING')
      expect(answer.body.error.message).toMatch(/gzip, deflate, br or identity/)
      expect((await adminGet(`${running.relay.url}/v1/deliveries`)).body.deliveries).toEqual([])
    },
  )

  it.each([
    ['gzip', 'not gzip at all: plain JSON', json({ batch: [track()] })],
    ['gzip', 'cut short', gzipSync(json({ batch: [track()] })).subarray(0, 20)],
    ['gzip', 'empty', Buffer.alloc(0)],
    ['deflate', 'garbage', Buffer.from('\x78\x9c garbage that is not deflate', 'latin1')],
    ['br', 'garbage', Buffer.from('\xff\xff\xff\xff garbage', 'latin1')],
  ])('refuses a corrupt %s body (%s) with 400 saying so', async (encoding, _what, body) => {
    const answer = await postBytes(`${running.relay.url}/v1/batch`, body, { 'content-encoding': encoding })
    expect(answer.status).toBe(400)
    expect(answer.body.error.code).toBe('ERR_MALFORMED_BODY')
    expect(answer.body.error.message).toContain(`not valid ${encoding} data`)
    // The relay goes on serving.
    expect((await postBytes(`${running.relay.url}/v1/batch`, json({ batch: [track()] }), {})).status).toBe(200)
  })

  it('holds the decoded body to the 500,000-byte limit: just under is accepted, just over is 413', async () => {
    const batchOfSize = (bytes: number): Buffer => {
      const shell = json({ batch: [track({ messageId: 'sized', properties: { pad: '' } })] })
      const padded = json({
        batch: [track({ messageId: 'sized', properties: { pad: 'x'.repeat(bytes - shell.length) } })],
      })
      expect(padded.length).toBe(bytes)
      return padded
    }
    // One message of ~500 KB is over the 32 KB message limit: refused on its own, but the body is read.
    const under = await postBytes(`${running.relay.url}/v1/batch`, gzipSync(batchOfSize(MAX_BATCH_BYTES)), {
      'content-encoding': 'gzip',
    })
    expect(under.status).toBe(400)
    expect(under.body.refused[0].reason).toMatch(/32000-byte limit/)

    const over = await postBytes(`${running.relay.url}/v1/batch`, gzipSync(batchOfSize(MAX_BATCH_BYTES + 1)), {
      'content-encoding': 'gzip',
    })
    expect(over.status).toBe(413)
    expect(over.body.error.code).toBe('ERR_BODY_TOO_LARGE')
    expect(over.body.error.message).toMatch(/decodes to more than 500000 bytes of gzip/)
  })

  it('still refuses a compressed body whose own Content-Length is over the limit', async () => {
    const answer = await postBytes(`${running.relay.url}/v1/batch`, Buffer.alloc(MAX_BATCH_BYTES + 1), {
      'content-encoding': 'gzip',
    })
    expect(answer.status).toBe(413)
    expect(answer.body.error.message).toMatch(/Content-Length is 500001/)
  })
})

describe('readLimited', () => {
  it.each([
    ['gzip', gzipSync],
    ['deflate', deflateSync],
    ['br', (data: Buffer) => brotliCompressSync(data, { params: { [constants.BROTLI_PARAM_QUALITY]: 1 } })],
  ] as const)('stops decoding %s at the limit and destroys the decoder', async (encoding, compress) => {
    const limit = 100_000
    // 50 MB of zeros: a few KB compressed.
    const bomb = compress(Buffer.alloc(50_000_000))
    expect(bomb.length).toBeLessThan(60_000)
    const source = new PassThrough()
    source.end(bomb)
    const decoder = createDecoder(encoding)
    let decoded = 0
    decoder.on('data', (chunk: Buffer) => (decoded += chunk.length))

    await expect(readLimited(source, limit, { encoding, decoder })).rejects.toMatchObject({
      status: 413,
      code: 'ERR_BODY_TOO_LARGE',
    })
    expect(decoder.destroyed).toBe(true)
    // Whatever the decoder had in hand when it was stopped is all there will ever be.
    await new Promise((resolve) => setTimeout(resolve, 50))
    const atStop = decoded
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(decoded).toBe(atStop)
    // One zlib chunk (16 KiB) past the limit at most, of the 50 MB the body holds.
    expect(decoded).toBeLessThanOrEqual(limit + 16 * 1024)
    expect(source.isPaused()).toBe(true)
  })

  it('reads a body exactly at the limit', async () => {
    const source = new PassThrough()
    source.end(gzipSync(Buffer.alloc(100_000, 'a')))
    const body = await readLimited(source, 100_000, { encoding: 'gzip', decoder: createDecoder('gzip') })
    expect(body.equals(Buffer.alloc(100_000, 'a'))).toBe(true)
  })
})
