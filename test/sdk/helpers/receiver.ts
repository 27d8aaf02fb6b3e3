import type { IncomingHttpHeaders, ServerResponse } from 'node:http'
import { gunzipSync } from 'node:zlib'
import type { Message } from '../../../src/shared/message'
import { startHttpReceiver } from '../../support/http-receiver'

/** One request as the receiver saw it. */
export interface ReceivedRequest {
  method: string
  url: string
  headers: IncomingHttpHeaders
  /** The body, as bytes, gunzipped when it came with `Content-Encoding: gzip`. */
  body: Buffer
  /** The body's bytes as they came over the wire (compressed, if they were). */
  wireBody: Buffer
  /** The body parsed as `{ batch, sentAt }`. */
  json: { batch: Message[]; sentAt: string }
}

/** Answers request number `index` (0-based); default: 200 `{}`. */
export type Responder = (request: ReceivedRequest, response: ServerResponse, index: number) => void

/** A real `node:http` tracking API on port 0 that records every request. */
export interface Receiver {
  endpoint: string
  requests: ReceivedRequest[]
  /** Every message received, in arrival order. */
  messages(): Message[]
  respond(responder: Responder): void
  close(): Promise<void>
}

export async function startReceiver(responder?: Responder): Promise<Receiver> {
  const requests: ReceivedRequest[] = []
  let respond: Responder = responder ?? ((_request, response) => response.end('{}'))
  const server = await startHttpReceiver((_req, res, recorded) => {
    const wireBody = recorded.body
    const body = recorded.headers['content-encoding'] === 'gzip' ? gunzipSync(wireBody) : wireBody
    const request: ReceivedRequest = {
      method: recorded.method,
      url: recorded.url,
      headers: recorded.headers,
      body,
      wireBody,
      json: JSON.parse(body.toString('utf8')) as ReceivedRequest['json'],
    }
    const index = requests.push(request) - 1
    respond(request, res, index)
  })
  return {
    endpoint: server.origin,
    requests,
    messages: () => requests.flatMap((request) => request.json.batch),
    respond(next) {
      respond = next
    },
    close: () => server.close(),
  }
}

/** Answers with `status` and optional headers. */
export function status(code: number, headers: Record<string, string> = {}): Responder {
  return (_request, response) => {
    response.writeHead(code, headers)
    response.end()
  }
}
