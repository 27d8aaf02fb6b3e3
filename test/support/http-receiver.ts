import {
  createServer as createHttpServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'

/** A request as a test receiver saw it, with its raw body bytes untouched. */
export interface RecordedRequest {
  method: string
  url: string
  headers: IncomingHttpHeaders
  rawHeaders: string[]
  body: Buffer
}

/** Answers request number `index` (0-based), given its whole body. */
export type ReceiverHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  request: RecordedRequest,
  index: number,
) => void

/** A real HTTP server on 127.0.0.1, port 0, that records every request before answering it. */
export interface HttpReceiver {
  /** `http(s)://127.0.0.1:PORT`, without a path. */
  origin: string
  requests: RecordedRequest[]
  /** Replaces how requests are answered from now on. */
  respond(handler: ReceiverHandler): void
  /** How many connections the server holds open now. */
  connections(): Promise<number>
  /** How many connections the server has accepted since it started (a reused one counts once). */
  accepted(): number
  /** Closes the server, ending connections it still holds (a handler that never answers, say). */
  close(): Promise<void>
}

/**
 * Starts the one test receiver every suite builds on: node:http, or node:https given a key and
 * cert. By default it answers 200 with `{}`.
 */
export async function startHttpReceiver(
  handler: ReceiverHandler = (_req, res) => res.writeHead(200).end('{}'),
  tls?: { key: string; cert: string },
): Promise<HttpReceiver> {
  const requests: RecordedRequest[] = []
  let answer = handler
  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const request: RecordedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        body: Buffer.concat(chunks),
      }
      const index = requests.push(request) - 1
      answer(req, res, request, index)
    })
  }
  const server = tls === undefined ? createHttpServer(listener) : createHttpsServer(tls, listener)
  let accepted = 0
  server.on('connection', () => accepted++)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    origin: `${tls === undefined ? 'http' : 'https'}://127.0.0.1:${port}`,
    requests,
    respond(next) {
      answer = next
    },
    accepted: () => accepted,
    connections: () =>
      new Promise((resolve, reject) =>
        server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
      ),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()))
        server.closeAllConnections()
      }),
  }
}
