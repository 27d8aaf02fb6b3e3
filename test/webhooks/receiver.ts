import {
  createServer as createHttpServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'

/** A request as a test receiver saw it: the raw body bytes, untouched. */
export interface ReceivedRequest {
  method: string
  url: string
  headers: IncomingHttpHeaders
  rawHeaders: string[]
  body: Buffer
}

export interface TestReceiver {
  url: string
  requests: ReceivedRequest[]
  /** How many connections the server holds open now. */
  connections(): Promise<number>
  close(): Promise<void>
}

type Handler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void

/** A real node:http (or node:https, given a key and cert) server on port 0 that records requests. */
export async function startReceiver(handler: Handler, tls?: { key: string; cert: string }): Promise<TestReceiver> {
  const requests: ReceivedRequest[] = []
  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        body,
      })
      handler(req, res, body)
    })
  }
  const server = tls === undefined ? createHttpServer(listener) : createHttpsServer(tls, listener)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `${tls === undefined ? 'http' : 'https'}://127.0.0.1:${port}/hook`,
    requests,
    connections: () =>
      new Promise((resolve, reject) =>
        server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
      ),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()))
        // A receiver that never answers still holds its sockets: end them so close() returns.
        server.closeAllConnections()
      }),
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
