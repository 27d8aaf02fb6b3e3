// Debug logging: run with DEBUG=analytics to see, on stderr, what is queued, flushed (count,
// bytes, status), retried and dropped. The write key never appears in it.
//   DEBUG=analytics TRACKLET_WRITE_KEY=… TRACKLET_ENDPOINT=http://localhost:8787 node examples/debug-logging.mjs
import { Analytics } from 'tracklet'

if (!process.env.DEBUG) console.error('debug-logging: set DEBUG=analytics to see the log')

const analytics = new Analytics(process.env.TRACKLET_WRITE_KEY ?? 'YOUR_WRITE_KEY', {
  endpoint: process.env.TRACKLET_ENDPOINT ?? 'https://api.segment.io',
  flushAt: 2,
})

analytics.identify({ userId: 'debug-user', traits: { plan: 'free' } })
analytics.track({ userId: 'debug-user', event: 'Report Exported', properties: { rows: 1200 } })
analytics.page({ userId: 'debug-user', name: 'Reports', properties: { path: '/reports' } })

await analytics.closeAndFlush()
