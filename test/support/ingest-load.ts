import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { request } from 'undici'

// Load and a receiver for the tests that break the database under a running relay: what the relay
// acknowledged (2xx) is what must arrive, whatever the database went through meanwhile.

/** A node:http receiver that counts each message id it was sent and answers 200. */
export interface CountingReceiver {
  url: string
  /** How many times each message id arrived. */
  sent: Map<string, number>
  close(): Promise<void>
}

/** Starts a {@link CountingReceiver} on port 0. */
export async function startCountingReceiver(): Promise<CountingReceiver> {
  const sent = new Map<string, number>()
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const { messageId } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { messageId: string }
      sent.set(messageId, (sent.get(messageId) ?? 0) + 1)
      res.writeHead(200).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    sent,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}

/** Batches posted without pause to a relay, and what became of them. */
export interface IngestLoad {
  /** Message ids of every batch the relay answered with a 2xx. */
  acknowledged: Set<string>
  /** How many batches got each status (0: the request itself failed). */
  statuses: Map<number, number>
  /** Stops sending, once the requests in flight are answered. */
  stop(): Promise<void>
}

/**
 * Posts batches of `batchSize` track messages to `relayUrl` (`/v1/batch`, with `authorization`),
 * `concurrency` at a time, until stopped. Ids are `prefix-n`, never reused.
 */
export function startIngestLoad(
  relayUrl: string,
  authorization: string,
  { prefix = 'load', batchSize = 20, concurrency = 4 } = {},
): IngestLoad {
  const acknowledged = new Set<string>()
  const statuses = new Map<number, number>()
  let next = 0
  let stopped = false
  const sender = async () => {
    while (!stopped) {
      const ids = Array.from({ length: batchSize }, () => `${prefix}-${next++}`)
      const batch = ids.map((messageId) => ({ type: 'track', userId: 'u1', event: 'Load', messageId }))
      let status = 0
      try {
        const response = await request(`${relayUrl}/v1/batch`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization },
          body: JSON.stringify({ batch }),
        })
        await response.body.dump()
        status = response.statusCode
      } catch {
        // The relay gone (the test then fails on its exit), or the connection reset.
      }
      statuses.set(status, (statuses.get(status) ?? 0) + 1)
      if (status >= 200 && status < 300) for (const id of ids) acknowledged.add(id)
      // A refused batch is answered at once: a short breath keeps the loop from spinning.
      if (status < 200 || status >= 300) await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }
  const senders = Array.from({ length: concurrency }, sender)
  return {
    acknowledged,
    statuses,
    stop: async () => {
      stopped = true
      await Promise.all(senders)
    },
  }
}
