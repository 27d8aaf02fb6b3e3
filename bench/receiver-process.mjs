// bench/relay.mjs's receiver in a process of its own (BENCH_RECEIVER=process): the webhook's
// requests are then parsed and answered off the thread that runs the SDK client, as they would be
// on another machine. In the bench's own thread (the default, as issue 43's harness measured), a
// relay that delivers faster during the burst also slows the client that feeds it.
// Run as a child: `expect` messages start a phase; it answers `all` with the phase's last arrival
// (ms since the epoch, performance-precise) and the latencies.
import { fork } from 'node:child_process'
import http from 'node:http'

if (process.argv[2] === 'child') {
  let phase
  const server = http.createServer((req, res) => {
    const chunks = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      res.writeHead(200).end()
      if (phase === undefined || phase.seen.has(body.messageId)) return // at-least-once: count each once
      phase.seen.add(body.messageId)
      phase.lastAt = performance.timeOrigin + performance.now()
      phase.latencies.push(Date.now() - Date.parse(body.timestamp))
      if (phase.seen.size === phase.expected) {
        process.send({ type: 'all', lastAt: phase.lastAt, latencies: phase.latencies })
        phase = undefined
      }
    })
  })
  server.keepAliveTimeout = 30_000
  process.on('message', (m) => {
    if (m.type === 'expect') phase = { expected: m.expected, seen: new Set(), latencies: [], lastAt: 0 }
    if (m.type === 'close') {
      server.closeAllConnections()
      server.close()
      process.disconnect()
    }
  })
  server.listen(0, '127.0.0.1', () =>
    process.send({ type: 'url', url: `http://127.0.0.1:${server.address().port}/hook` }),
  )
}

/** The receiver in a child process, with the in-thread receiver's interface (`url`, `expect`, `close`). */
export function startReceiverProcess() {
  const child = fork(new URL(import.meta.url).pathname, ['child'])
  let phase
  child.on('message', (m) => {
    if (m.type !== 'all' || phase === undefined) return
    // In this process's performance.now() timebase, as the callers' start times are.
    phase.lastAt = m.lastAt - performance.timeOrigin
    phase.latencies = m.latencies
    phase.done()
  })
  return new Promise((resolve) =>
    child.once('message', (m) =>
      resolve({
        url: m.url,
        expect(expected) {
          phase = { expected, latencies: [], lastAt: 0 }
          phase.all = new Promise((done) => (phase.done = done))
          child.send({ type: 'expect', expected })
          return phase
        },
        close: () => child.send({ type: 'close' }),
      }),
    ),
  )
}
