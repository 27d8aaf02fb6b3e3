// Development mode: `flushAt: 1` sends every call at once, and each callback says whether the
// message was delivered — handy while wiring up tracking.
//   TRACKLET_WRITE_KEY=… TRACKLET_ENDPOINT=http://localhost:8787 node examples/development.mjs
import { Analytics } from 'tracklet'

const analytics = new Analytics(process.env.TRACKLET_WRITE_KEY ?? 'YOUR_WRITE_KEY', {
  endpoint: process.env.TRACKLET_ENDPOINT ?? 'https://api.segment.io',
  flushAt: 1,
})

const report = (err, message) => {
  if (err) console.error(`${message.type}: not delivered: ${err.code}: ${err.message}`)
  else console.log(`${message.type}: delivered ${message.messageId}`)
}

analytics.identify({ userId: 'dev-user', traits: { email: 'dev@example.com', plan: 'pro' } }, report)
analytics.track({ userId: 'dev-user', event: 'Signed Up', properties: { source: 'example' } }, report)
analytics.track({ userId: 'dev-user' }, report) // no `event`: refused at the call, reported, never thrown

await analytics.closeAndFlush()
