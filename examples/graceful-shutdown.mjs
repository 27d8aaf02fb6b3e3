// Graceful shutdown: on SIGTERM (docker stop, Kubernetes) or SIGINT (Ctrl-C), send what is
// still queued — waiting 5 s at most — before the process exits.
//   TRACKLET_WRITE_KEY=… TRACKLET_ENDPOINT=http://localhost:8787 node examples/graceful-shutdown.mjs
import { Analytics } from 'tracklet'

const analytics = new Analytics(process.env.TRACKLET_WRITE_KEY ?? 'YOUR_WRITE_KEY', {
  endpoint: process.env.TRACKLET_ENDPOINT ?? 'https://api.segment.io',
})

// A stand-in for the application's work: a job that runs until the process is told to stop.
let jobs = 0
const worker = setInterval(() => {
  jobs += 1
  analytics.track({ userId: 'worker-1', event: 'Job Processed', properties: { job: jobs } })
}, 10)

async function shutdown(signal) {
  clearInterval(worker)
  // Messages still queued below flushAt (20) are sent now; any not delivered in 5 s are
  // reported as ERR_CLOSED instead of holding up the exit.
  await analytics.closeAndFlush({ timeout: 5_000 })
  const { delivered, failed } = analytics.stats()
  console.log(`graceful-shutdown: ${signal}: ${delivered} delivered, ${failed} failed`)
  process.exit(failed === 0 ? 0 : 1)
}
process.once('SIGTERM', () => shutdown('SIGTERM'))
process.once('SIGINT', () => shutdown('SIGINT'))

// To keep the example self-contained, it stops itself after five jobs, as `kill <pid>` would.
const stopper = setInterval(() => {
  if (jobs >= 5) {
    clearInterval(stopper)
    process.kill(process.pid, 'SIGTERM')
  }
}, 5)
