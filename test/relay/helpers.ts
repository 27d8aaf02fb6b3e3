import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http'
import { request } from 'undici'
import { createRelay, type Relay, type RelayOptions } from '../../src/relay/index'
import { startHttpReceiver } from '../support/http-receiver'
import { type StoreKind, throwawayDatabase } from '../support/stores'
import { waitFor } from '../support/wait-for'

export { waitFor }

export const WRITE_KEY = 'wk-test-web'
export const ADMIN_TOKEN = 'admin-token-for-tests'

/** A webhook request as the test receiver saw it. */
export interface Received {
  headers: IncomingHttpHeaders
  body: Record<string, unknown>
  raw: string
}

export interface Receiver {
  url: string
  received: Received[]
  /** Replaces how the receiver answers from now on. */
  respond(handler: (req: IncomingMessage, res: ServerResponse) => void): void
  close(): Promise<void>
}

/** A real node:http receiver on port 0 that records every webhook and answers 200 unless told otherwise. */
export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = []
  let handler = (_req: IncomingMessage, res: ServerResponse): void => {
    res.writeHead(200).end('ok')
  }
  const server = await startHttpReceiver((req, res, request) => {
    const raw = request.body.toString('utf8')
    received.push({ headers: request.headers, body: JSON.parse(raw) as Record<string, unknown>, raw })
    handler(req, res)
  })
  return {
    url: `${server.origin}/hook`,
    received,
    respond: (next) => {
      handler = next
    },
    close: () => server.close(),
  }
}

/**
 * Starts a relay on port 0 with one source `web` sending to `receiverUrl`, on a store of `store`'s
 * kind of its own (SQLite in memory, or a fresh PostgreSQL database) unless `overrides.database` names one.
 */
export async function startRelay(
  receiverUrl: string,
  overrides: Partial<RelayOptions> = {},
  store: StoreKind = 'sqlite',
): Promise<Relay> {
  return createRelay({
    port: 0,
    database: overrides.database ?? (await throwawayDatabase(store)),
    adminToken: ADMIN_TOKEN,
    allowPrivateNetworks: true,
    sources: [{ name: 'web', writeKey: WRITE_KEY, destinations: { Webhooks: { webhooks: [{ url: receiverUrl }] } } }],
    ...overrides,
  })
}

export function basic(writeKey: string): string {
  return `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`
}

/** POSTs JSON to the relay and returns the status and parsed answer. */
export async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = { authorization: basic(WRITE_KEY) },
  method: 'POST' | 'PUT' = 'POST',
): Promise<{ status: number; body: any }> {
  const response = await request(url, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
  const text = await response.body.text()
  return { status: response.statusCode, body: text.length > 0 ? JSON.parse(text) : undefined }
}

/** GETs from the admin API with the admin token. */
export async function adminGet(url: string): Promise<{ status: number; body: any }> {
  const response = await request(url, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
  return { status: response.statusCode, body: await response.body.json() }
}

export const admin = { authorization: `Bearer ${ADMIN_TOKEN}` }

/** A valid track message. */
export function track(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'track',
    userId: 'u1',
    event: 'Signed Up',
    messageId: `m-${Math.random().toString(36).slice(2)}`,
    ...overrides,
  }
}

/** Waits until the delivery log has a delivery with `status` (any, or the one with `messageId`). */
export function waitForDelivery(relayUrl: string, status: string, messageId?: string): Promise<any> {
  return waitFor(async () => {
    const { body } = await adminGet(`${relayUrl}/v1/deliveries?status=${status}`)
    return (body.deliveries as any[]).find((d) => messageId === undefined || d.messageId === messageId)
  }, `a ${status} delivery`)
}
