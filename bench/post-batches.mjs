// The relay benches' client: batch bodies, built beforehand (so that the CPU measured is the
// relay's, not a client's), POSTed to a relay's /v1/batch over undici keep-alive.
import { Agent, request } from 'undici'

/**
 * POSTs each of `bodies` to `url`, `inFlight` at a time, with `writeKey` in Basic auth; resolves
 * with how many bodies were refused (any answer but 200). With `perSecond`, starts at most that
 * many bodies a second (evenly spaced), so the relay is offered a steady load below what it could
 * take.
 */
export async function postBatches(url, bodies, { writeKey, inFlight, perSecond }) {
  const agent = new Agent({ connections: inFlight, keepAliveTimeout: 30_000 })
  const authorization = `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`
  let next = 0
  let refused = 0
  const started = performance.now()
  try {
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next < bodies.length) {
          const index = next++
          if (perSecond !== undefined) {
            const due = started + (index * 1000) / perSecond
            if (due > performance.now()) await new Promise((resolve) => setTimeout(resolve, due - performance.now()))
          }
          const response = await request(url, {
            method: 'POST',
            dispatcher: agent,
            headers: { authorization, 'content-type': 'application/json' },
            body: bodies[index],
          })
          await response.body.dump()
          if (response.statusCode !== 200) refused++
        }
      }),
    )
  } finally {
    await agent.close()
  }
  return refused
}
