import type { ServerResponse } from 'node:http'
import { gunzipSync } from 'node:zlib'
import { startHttpReceiver } from '../support/http-receiver'

/** One request as the runtime sent it. */
export interface RuntimeRequest {
  status: number
  encoding: string | undefined
  userAgent: string | undefined
  events: string[]
  texts: unknown[]
}

/** Where the probe's second client sends: answered 429 with `Retry-After: 30`, every time. */
export const PAUSE_PATH = '/pause/v1/batch'

/** Where a program that never closes its client sends (the beforeExit tests): answered 200. */
export const EXIT_PATH = '/exit/v1/batch'

/**
 * The tracking API the probe sends to: 429 with `Retry-After: 1` first, then 413 for a batch of
 * more than two messages, then 200, recording each request (its body gunzipped). Requests to
 * `PAUSE_PATH` are only counted, and answered 429 with `Retry-After: 30`; the events sent to
 * `EXIT_PATH` are kept apart, and answered 200.
 */
export async function startRuntimeReceiver(): Promise<{
  url: string
  requests: RuntimeRequest[]
  /** How many requests reached `PAUSE_PATH`. */
  pauseRequests(): number
  /** The events of each request to `EXIT_PATH`. */
  exitBatches: string[][]
  close(): Promise<void>
}> {
  const requests: RuntimeRequest[] = []
  let pauseRequests = 0
  const exitBatches: string[][] = []
  const server = await startHttpReceiver((_req, res: ServerResponse, recorded) => {
    if (recorded.url === PAUSE_PATH) {
      pauseRequests++
      res.writeHead(429, { 'retry-after': '30' }).end('{}')
      return
    }
    if (recorded.url === EXIT_PATH) {
      const { batch } = JSON.parse(recorded.body.toString('utf8')) as { batch: { event: string }[] }
      exitBatches.push(batch.map((message) => message.event))
      res.writeHead(200).end('{}')
      return
    }
    const encoding = recorded.headers['content-encoding']
    const body = encoding === 'gzip' ? gunzipSync(recorded.body) : recorded.body
    const batch = (JSON.parse(body.toString('utf8')) as { batch: { event: string; properties: { text: unknown } }[] })
      .batch
    const status = requests.length === 0 ? 429 : batch.length > 2 ? 413 : 200
    requests.push({
      status,
      encoding,
      userAgent: recorded.headers['user-agent'],
      events: batch.map((message) => message.event),
      texts: batch.map((message) => message.properties.text),
    })
    res.writeHead(status, status === 429 ? { 'retry-after': '1' } : {}).end('{}')
  })
  return { url: server.origin, requests, pauseRequests: () => pauseRequests, exitBatches, close: () => server.close() }
}
