import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { gunzipSync } from 'node:zlib'
import type { Message } from '../../../src/shared/message'

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
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const wireBody = Buffer.concat(chunks)
      const body = req.headers['content-encoding'] === 'gzip' ? gunzipSync(wireBody) : wireBody
      const request: ReceivedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body,
        wireBody,
        json: JSON.parse(body.toString('utf8')) as ReceivedRequest['json'],
      }
      const index = requests.push(request) - 1
      respond(request, res, index)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    messages: () => requests.flatMap((request) => request.json.batch),
    respond(next) {
      respond = next
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((error) => (error ? reject(error) : resolve()))
      }),
  }
}

/** Answers with `status` and optional headers. */
export function status(code: number, headers: Record<string, string> = {}): Responder {
  return (_request, response) => {
    response.writeHead(code, headers)
    response.end()
  }
}
