// One variant of the benchmark, in its own process so that its CPU and peak RSS are its own:
//   node bench/client.mjs <baseline|sdk> <endpoint> <events> [batchSize] [gzip]
// batchSize is flushAt for the SDK and the most events per body for the baseline; `gzip` turns on
// the SDK's gzip option.
// Sends the events, waits until all are delivered, and sends the figures to its parent (IPC).
import { setTimeout as sleep } from 'node:timers/promises'
import { makeEvent, WRITE_KEY } from './events.mjs'
import { startBaseline } from './baseline.mjs'

const [variant, endpoint, eventsArg, batchSizeArg, gzipArg] = process.argv.slice(2)
const EVENTS = Number(eventsArg)
/** Calls made per event-loop turn: the application produces events in bursts. */
const BURST = 1_000
/**
 * The same back-pressure for every variant: once this many events are outstanding (made but not
 * yet delivered), the producer waits for the pipeline to drain to LOW_WATER. Without it, a
 * producer faster than the network would simply queue all 100,000 events in memory.
 */
const HIGH_WATER = 10_000
const LOW_WATER = 5_000

const batchSize = Number(batchSizeArg) || undefined
const sender =
  variant === 'baseline' ? startBaseline(endpoint, batchSize) : await startSdk(endpoint, batchSize, gzipArg === 'gzip')

const cpuBefore = process.cpuUsage()
const started = process.hrtime.bigint()
let callerNs = 0n
let callerCpuUs = 0

for (let i = 0; i < EVENTS; ) {
  const end = Math.min(i + BURST, EVENTS)
  // Only the calls are timed (with building each call's fields, the same for every variant):
  // the caller-side cost an application pays.
  const before = process.hrtime.bigint()
  const cpuAtBurst = process.cpuUsage()
  for (; i < end; i++) sender.call(makeEvent(i))
  callerNs += process.hrtime.bigint() - before
  const burstCpu = process.cpuUsage(cpuAtBurst)
  callerCpuUs += burstCpu.user + burstCpu.system

  sender.afterBurst()
  if (sender.outstanding() >= HIGH_WATER) {
    while (sender.outstanding() > LOW_WATER) await sleep(1)
  } else {
    await new Promise((resolve) => setImmediate(resolve))
  }
}
await sender.finish()

const seconds = Number(process.hrtime.bigint() - started) / 1e9
const cpu = process.cpuUsage(cpuBefore)
process.send({
  variant: sender.label,
  events: EVENTS,
  delivered: sender.delivered(),
  failed: sender.failed(),
  seconds,
  eventsPerSecond: EVENTS / seconds,
  cpuSeconds: (cpu.user + cpu.system) / 1e6,
  peakRssBytes: process.resourceUsage().maxRSS * 1024,
  callerNsPerCall: Number(callerNs) / EVENTS,
  callerCpuNsPerCall: (callerCpuUs * 1000) / EVENTS,
})

/** The SDK, as an application uses it: one `track` call per event. */
async function startSdk(endpoint, flushAt, gzip) {
  const { Analytics } = await import('tracklet')
  const analytics = new Analytics(WRITE_KEY, {
    endpoint,
    ...(flushAt === undefined ? {} : { flushAt }),
    ...(gzip ? { gzip } : {}),
  })
  let errors = 0
  let firstError
  analytics.on('error', (error) => {
    errors += 1
    firstError ??= error
  })
  return {
    label: `${flushAt === undefined ? 'sdk (defaults)' : `sdk (flushAt ${flushAt})`}${gzip ? ' gzip' : ''}`,
    call: (event) => analytics.track(event),
    afterBurst: () => {},
    outstanding: () => {
      const { queued, inFlight } = analytics.stats()
      return queued + inFlight
    },
    finish: async () => {
      await analytics.closeAndFlush({ timeout: 60_000 })
      if (firstError !== undefined)
        console.error(`bench: ${errors} SDK errors, the first: ${firstError.code}: ${firstError.message}`)
    },
    delivered: () => analytics.stats().delivered,
    failed: () => analytics.stats().failed,
  }
}
