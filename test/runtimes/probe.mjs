// Runs inside each runtime (Bun, Deno, workerd, Vercel's edge-runtime) against the test's receiver:
// the same public API and rules as on Node, through the build the package's `exports` pick there.
import { Analytics } from 'tracklet'

/**
 * Sends four messages gzip-compressed in one batch (the receiver answers 429 with Retry-After,
 * then 413 for a batch of more than two, then 200) and reports how each settled, the client's
 * stats, and whether the Node-only `dispatcher` option is refused; and how a message settled that
 * the API asked to wait 30 s for (`paused`).
 */
export async function probe(endpoint, waitUntil) {
  let dispatcherRefused = false
  try {
    new Analytics('k', { endpoint, dispatcher: { dispatch() {} } })
  } catch (error) {
    dispatcherRefused = error instanceof TypeError && /dispatcher/.test(error.message)
  }
  // Where the runtime has no CompressionStream, gzip: true must be refused, never ignored.
  const canGzip = typeof globalThis.CompressionStream === 'function'
  let gzipRefused = false
  if (!canGzip) {
    try {
      new Analytics('k', { endpoint, gzip: true })
    } catch (error) {
      gzipRefused = error instanceof TypeError && /CompressionStream/.test(error.message)
    }
  }
  // A second client, answered 429 with Retry-After: 30 (see runtime-receiver.ts): honouring it
  // holds the message past closeAndFlush's 1.5 s deadline, so it fails as closed after one
  // request; the client's own backoff (a quarter of a second) would have retried it.
  const pauseClient = new Analytics('runtime-key', { endpoint, path: '/pause/v1/batch', flushAt: 1 })
  const paused = new Promise((resolve) => {
    pauseClient.track({ userId: 'u', event: 'paused' }, (error) => resolve(error?.code ?? 'delivered'))
    pauseClient.closeAndFlush({ timeout: 1500 })
  })
  const analytics = new Analytics('runtime-key', {
    endpoint,
    gzip: canGzip,
    flushAt: 4,
    maxRetries: 3,
    ...(waitUntil === undefined ? {} : { waitUntil }),
  })
  const errors = []
  analytics.on('error', (error) => errors.push(error.code))
  const outcomes = await Promise.all(
    ['a', 'b', 'c', 'd'].map(
      (event) =>
        new Promise((resolve) => {
          analytics.track({ userId: 'u', event, properties: { text: 'ünïcødé ✓' } }, (error) =>
            resolve(error?.code ?? 'delivered'),
          )
        }),
    ),
  )
  await analytics.closeAndFlush({ timeout: 15_000 })
  return { outcomes, errors, stats: analytics.stats(), dispatcherRefused, canGzip, gzipRefused, paused: await paused }
}
