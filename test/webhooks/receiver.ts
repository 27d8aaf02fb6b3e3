import type { IncomingMessage, ServerResponse } from 'node:http'
import { type RecordedRequest, startHttpReceiver } from '../support/http-receiver'

/** A request as a test receiver saw it: the raw body bytes, untouched. */
export type ReceivedRequest = RecordedRequest

export interface TestReceiver {
  url: string
  requests: ReceivedRequest[]
  /** How many connections the server holds open now. */
  connections(): Promise<number>
  /** How many connections it has accepted so far (a reused one counts once). */
  accepted(): number
  close(): Promise<void>
}

type Handler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void

/** A real node:http (or node:https, given a key and cert) server on port 0 that records requests. */
export async function startReceiver(handler: Handler, tls?: { key: string; cert: string }): Promise<TestReceiver> {
  const server = await startHttpReceiver((req, res, request) => handler(req, res, request.body), tls)
  return {
    url: `${server.origin}/hook`,
    requests: server.requests,
    connections: server.connections,
    accepted: server.accepted,
    close: server.close,
  }
}

/** Answers every request with `status` (and optional headers). */
export function answer(status: number, headers: Record<string, string> = {}): Handler {
  return (_req, res) => {
    res.writeHead(status, headers)
    res.end('{"received":true}')
  }
}

/** Never answers. */
export const hang: Handler = () => {}
