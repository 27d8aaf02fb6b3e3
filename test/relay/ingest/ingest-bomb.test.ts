import { readFileSync } from 'node:fs'
import { connect } from 'node:net'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { Relay } from '../../../src/relay/index'
import { basic, post, type Receiver, startReceiver, startRelay, track, WRITE_KEY } from '../helpers'

// Decompression bombs against a real relay, in a file of their own so that the process's peak
// memory (maxRSS) says what they cost.
//
// zeros-10gib.br: 10 GiB of zero bytes as 8 KB of brotli, made once with
//   createBrotliCompress({ params: { [BROTLI_PARAM_QUALITY]: 5, [BROTLI_PARAM_LGWIN]: 24 } })
// over a stream of 10,240 one-MiB zero buffers.
const BROTLI_BOMB = readFileSync(new URL('../../fixtures/zeros-10gib.br', import.meta.url))

// A gzip file may hold many members, decoded one after the other: 400 copies of 1 MB of zeros
// make a body of ~400 KB (under the limit as sent) that inflates to 400 MB.
const GZIP_BOMB = Buffer.concat(Array.from({ length: 400 }, () => gzipSync(Buffer.alloc(1_000_000))))

let receiver: Receiver
let relay: Relay
beforeAll(async () => {
  receiver = await startReceiver()
  relay = await startRelay(receiver.url)
})
afterAll(async () => {
  await receiver.close()
  await relay.close()
})

/** Sends a whole request on a raw socket and returns everything answered before the relay closed it. */
async function send(relayUrl: string, encoding: string, body: Buffer): Promise<string> {
  const socket = connect(Number(new URL(relayUrl).port), '127.0.0.1')
  let answer = ''
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString()))
  socket.on('error', () => {}) // a reset once the relay has answered and closed is expected
  const head = [
    'POST /v1/batch HTTP/1.1',
    'Host: relay',
    `Authorization: ${basic(WRITE_KEY)}`,
    'Content-Type: application/json',
    `Content-Encoding: ${encoding}`,
    `Content-Length: ${body.length}`,
    '',
    '',
  ].join('\r\n')
  socket.write(head)
  socket.write(body)
  await new Promise((resolve) => socket.once('close', resolve))
  return answer
}

const peakRssMb = (): number => process.resourceUsage().maxRSS / 1024

it.each([
  ['br', `${BROTLI_BOMB.length}-byte brotli body of 10 GiB`, BROTLI_BOMB],
  ['gzip', `${GZIP_BOMB.length}-byte gzip body of 400 MB`, GZIP_BOMB],
])(
  'refuses a %s bomb (a %s) with 413 at the limit, in little memory, and stays responsive',
  async (encoding, _what, bomb) => {
    expect(bomb.length).toBeLessThan(500_000)
    const peakBefore = peakRssMb()
    const answer = await send(relay.url, encoding, bomb)
    expect(answer).toMatch(/^HTTP\/1.1 413/)
    expect(answer).toContain(`decodes to more than 500000 bytes of ${encoding}`)
    // Decoding the whole of either would take 400 MB or 10 GiB; the relay holds 500 KB of it.
    expect(peakRssMb() - peakBefore).toBeLessThan(64)
    // And it goes on serving.
    expect((await post(`${relay.url}/v1/batch`, { batch: [track()] })).status).toBe(200)
  },
)
