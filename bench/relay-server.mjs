// The relay under benchmark, in its own process so that its memory and CPU are its own.
// Started by bench/relay.mjs (and bench/relay-fault.mjs) with the relay options as JSON in argv[2];
// reports its URL over IPC; on 'usage' reports its CPU time so far; on 'stop' closes and reports
// its peak RSS and CPU time.
import { fork } from 'node:child_process'
import { createRelay } from '../dist/relay/index.js'

// BENCH_STREAM_READER=1: one reader takes the whole live stream, in a process of its own.
const READER_TOKEN = 'bench-stream-reader-admin-token'
const withReader = process.env.BENCH_STREAM_READER === '1'
const options = JSON.parse(process.argv[2])
const relay = await createRelay(withReader ? { ...options, adminToken: READER_TOKEN } : options)
if (withReader) {
  const reader = fork(new URL('./stream-reader.mjs', import.meta.url), [relay.url, READER_TOKEN])
  await new Promise((resolve) => reader.once('message', resolve))
  process.once('exit', () => reader.kill())
}
process.send({ url: relay.url })
process.on('message', async (message) => {
  if (message === 'usage') {
    const cpu = process.cpuUsage()
    process.send({ cpuMs: (cpu.user + cpu.system) / 1000 })
    return
  }
  if (message !== 'stop') return
  const cpu = process.cpuUsage()
  await relay.close()
  process.send({ maxRssBytes: process.resourceUsage().maxRSS * 1024, cpuMs: (cpu.user + cpu.system) / 1000 }, () =>
    process.exit(0),
  )
})
