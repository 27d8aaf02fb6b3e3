import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** A real node:http receiver that counts: what came, when, and how much at once. */
export interface CountingReceiver {
  url: string
  /** Each request's message id, in arrival order. */
  ids: string[]
  /** Each request's arrival, `performance.now()` ms. */
  times: number[]
  /** Each request's message as received. */
  bodies: Record<string, unknown>[]
  inFlight: number
  mostInFlight: number
  respond(handler: (req: IncomingMessage, res: ServerResponse, index: number) => void): void
  close(): Promise<void>
}

/** Starts one on 127.0.0.1, port 0; it answers 200 until told otherwise. */
export async function countingReceiver(): Promise<CountingReceiver> {
  let handler: Parameters<CountingReceiver['respond']>[0] = (_req, res) => void res.writeHead(200).end()
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>
      const index = receiver.ids.length
      receiver.ids.push(body['messageId'] as string)
      receiver.times.push(performance.now())
      receiver.bodies.push(body)
      receiver.inFlight++
      receiver.mostInFlight = Math.max(receiver.mostInFlight, receiver.inFlight)
      res.on('close', () => receiver.inFlight--)
      handler(req, res, index)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const receiver: CountingReceiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    ids: [],
    times: [],
    bodies: [],
    inFlight: 0,
    mostInFlight: 0,
    respond: (next) => {
      handler = next
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
  return receiver
}

/**
 * The fewest milliseconds `count` requests may span under `ratePerSecond` with a burst of one
 * second's worth: a lower bound only, which a slow machine never breaks.
 */
export function leastSpanMs(count: number, ratePerSecond: number): number {
  return Math.max(0, ((count - ratePerSecond - 1) * 1000) / ratePerSecond)
}
