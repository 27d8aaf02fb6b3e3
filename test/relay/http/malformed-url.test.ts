import { connect } from 'node:net'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Relay } from '../../../src/relay/index'
import { startRelay } from '../helpers'

let relay: Relay

beforeEach(async () => {
  relay = await startRelay('http://127.0.0.1:1/hook')
})
afterEach(async () => {
  await relay.close()
})

/** Sends raw bytes to the relay and resolves with everything it answered before closing. */
function rawRequest(relayUrl: string, bytes: string): Promise<string> {
  const { hostname, port } = new URL(relayUrl)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(bytes))
    let answer = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => (answer += chunk))
    socket.on('end', () => resolve(answer))
    socket.on('error', reject)
  })
}

describe('a request line the URL parser refuses', () => {
  it('is answered 400, and the relay keeps serving the next request', async () => {
    const answer = await rawRequest(relay.url, 'GET http://[ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    expect(answer).toMatch(/^HTTP\/1\.1 400 /)
    expect(answer).toContain('ERR_INVALID_URL')

    const health = await rawRequest(relay.url, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    expect(health).toMatch(/^HTTP\/1\.1 200 /)
  })
})
