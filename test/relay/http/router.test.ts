import { once } from 'node:events'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRouter } from '../../../src/relay/http/router'
import { sendJson } from '../../../src/relay/http/body'
import type { Route } from '../../../src/relay/http/route'

// The router tries only the routes of the request's method, the first whose pattern matches
// answering; 404 and 405 (with Allow) when none does.
const answer =
  (name: string): Route['handler'] =>
  async (_req, res, params) =>
    sendJson(res, 200, { name, params })
const routes: Route[] = [
  { method: 'GET', pattern: /^\/a$/, handler: answer('get a') },
  { method: 'POST', pattern: /^\/a$/, handler: answer('post a') },
  { method: 'POST', pattern: /^\/b\/(\w+)$/, handler: answer('post b') },
  { method: 'POST', pattern: /^\/b\/(x)$/, handler: answer('post b again') },
]

let server: http.Server
let base: string
beforeAll(async () => {
  server = http.createServer(createRouter(routes))
  await once(server.listen(0, '127.0.0.1'), 'listening')
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

async function call(method: string, path: string) {
  const response = await request(`${base}${path}`, { method })
  const body = await response.body.json()
  return { status: response.statusCode, allow: response.headers['allow'], body }
}

const ok = (name: string, params?: string[]) => ({ status: 200, body: { name, params } })

describe('createRouter', () => {
  it('answers with the first route of the method whose pattern matches', async () => {
    expect(await call('GET', '/a')).toMatchObject(ok('get a', []))
    expect(await call('POST', '/a')).toMatchObject(ok('post a', []))
    expect(await call('POST', '/b/x?q=1')).toMatchObject(ok('post b', ['x']))
  })

  it('answers 405 naming the methods the path takes, and 404 for a path none takes', async () => {
    const wrongMethod = await call('PUT', '/a')
    expect(wrongMethod).toMatchObject({ status: 405, allow: 'GET, POST' })
    const message = '/a takes GET, POST'
    expect(wrongMethod.body).toEqual({ error: { code: 'ERR_METHOD_NOT_ALLOWED', message } })
    const notFound = { status: 404, body: { error: { code: 'ERR_NOT_FOUND' } } }
    expect(await call('GET', '/c')).toMatchObject(notFound)
  })
})
