// The delivery baseline: the webhook bodies the relay sends — each message formatted, serialised
// and signed (X-Signature) — POSTed by a hand-written loop with undici keep-alive, `inFlight` at
// a time, to the same receiver. What the relay's delivery is reported as a ratio to.
import { Agent, request } from 'undici'
import { formatMessage, sign } from '../dist/webhooks/index.js'

/** Resolves with { ms, cpuUs } once `messages` have all been answered 2xx (retrying any that fail). */
export async function deliveryBaseline(url, messages, secret, inFlight) {
  const agent = new Agent({ connections: inFlight, keepAliveTimeout: 30_000 })
  let next = 0
  const cpu = process.cpuUsage()
  const started = performance.now()
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < messages.length) {
        const message = messages[next++]
        const body = Buffer.from(JSON.stringify(formatMessage(message)), 'utf8')
        for (;;) {
          const response = await request(url, {
            method: 'POST',
            dispatcher: agent,
            headers: {
              'user-agent': 'Tracklet/1.0',
              'content-type': 'application/json',
              'x-signature': sign(body, secret),
            },
            body,
          })
          await response.body.dump()
          if (response.statusCode < 300) break
        }
      }
    }),
  )
  const ms = performance.now() - started
  const used = process.cpuUsage(cpu)
  await agent.close()
  return { ms, cpuUs: used.user + used.system }
}
