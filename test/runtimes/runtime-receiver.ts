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

/**
 * The tracking API the probe sends to: 429 with `Retry-After: 1` first, then 413 for a batch of
 * more than two messages, then 200, recording each request (its body gunzipped).
 */
export async function startRuntimeReceiver(): Promise<{
  url: string
  requests: RuntimeRequest[]
  close(): Promise<void>
}> {
  const requests: RuntimeRequest[] = []
  const server = await startHttpReceiver((_req, res: ServerResponse, recorded) => {
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
  return { url: server.origin, requests, close: () => server.close() }
}
