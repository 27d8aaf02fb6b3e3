// bench/relay.mjs's webhook receiver: it answers 200 at once and notes, per phase, when each
// message arrived. In a child process of its own by default, as on another machine: the raw
// sender's CPU (the bench process's) is then the sender's alone. With BENCH_RECEIVER=thread it
// runs in the bench's own thread, as it did before: that counted the receiver's parsing of each
// POST into the raw sender's CPU (288 against 184 µs a POST in two runs of one build), which
// flattered every ratio to it.
import { fork } from 'node:child_process'
import http from 'node:http'

// The server: `phaseDone(phase)` once each of the current phase's messages has arrived (each
// counted once: delivery is at-least-once). Answers the server and `expect(expected)`.
function countingServer(phaseDone) {
  let phase
  const server = http.createServer((req, res) => {
    const chunks = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      res.writeHead(200).end()
      if (phase === undefined || phase.seen.has(body.messageId)) return
      phase.seen.add(body.messageId)
      phase.lastAt = performance.now()
      phase.latencies.push(Date.now() - Date.parse(body.timestamp))
      if (phase.seen.size === phase.expected) phaseDone(phase)
    })
  })
  server.keepAliveTimeout = 30_000
  const expect = (expected) => {
    phase = { expected, seen: new Set(), latencies: [], lastAt: 0 }
    return phase
  }
  const listening = new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = () => `http://127.0.0.1:${server.address().port}/hook`
  const close = () => {
    server.closeAllConnections()
    server.close()
  }
  return { listening, url, expect, close }
}

/**
 * The receiver in this thread: `url`, `expect(expected)` (a phase whose `all` resolves once each
 * message has arrived; then `lastAt`, in this process's `performance.now()`, and `latencies`), `close()`.
 */
export async function startReceiver() {
  const counting = countingServer((phase) => phase.done())
  await counting.listening
  return {
    url: counting.url(),
    expect(expected) {
      const phase = counting.expect(expected)
      phase.all = new Promise((done) => (phase.done = done))
      return phase
    },
    close: counting.close,
  }
}

/** The same receiver in a child process. */
export function startReceiverProcess() {
  const child = fork(new URL(import.meta.url).pathname, ['child'])
  // Should the bench fail, the child goes with it.
  process.once('exit', () => child.kill())
  let phase
  child.on('message', (m) => {
    if (m.type !== 'all' || phase === undefined) return
    // From the child's timebase to this process's, as the callers' start times are.
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

// The child: `expect` starts a phase; it answers `all` with the phase's last arrival (ms since the
// epoch, as precise as performance.now()) and its latencies.
if (process.argv[2] === 'child') {
  const counting = countingServer((phase) =>
    process.send({ type: 'all', lastAt: performance.timeOrigin + phase.lastAt, latencies: phase.latencies }),
  )
  process.on('message', (m) => {
    if (m.type === 'expect') counting.expect(m.expected)
    if (m.type === 'close') {
      counting.close()
      process.disconnect()
    }
  })
  await counting.listening
  process.send({ type: 'url', url: counting.url() })
}
