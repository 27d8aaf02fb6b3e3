// Runs every example against a local receiver and checks what arrived. CI runs it after the
// build:  npm run build && node examples/run-all.mjs
// Exits non-zero if an example fails, a message is missing, or a write key shows in any output.
import { execFile } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:http'
import { fileURLToPath } from 'node:url'

const TIMEOUT_MS = 20_000

/** Each example, the environment it needs, and what must have arrived (a problem, or nothing). */
const EXAMPLES = [
  {
    file: 'http-server.mjs',
    check: ({ messages }) =>
      expectMessages(messages, [
        { type: 'track', event: 'Request Handled', properties: { method: 'GET', path: '/', status: 200 } },
        { type: 'track', event: 'Request Handled', properties: { method: 'GET', path: '/pricing', status: 200 } },
        { type: 'track', event: 'Request Handled', properties: { method: 'GET', path: '/missing', status: 404 } },
      ]),
  },
  {
    file: 'development.mjs',
    check: ({ messages, stdout, stderr }) =>
      expectMessages(messages, [
        { type: 'identify', userId: 'dev-user', traits: { email: 'dev@example.com', plan: 'pro' } },
        { type: 'track', userId: 'dev-user', event: 'Signed Up' },
      ]) ??
      expectText(stdout, /^identify: delivered \S+\ntrack: delivered \S+\n$/, 'stdout') ??
      expectText(stderr, /track: not delivered: ERR_INVALID_MESSAGE: .*event/, 'stderr'),
  },
  {
    file: 'graceful-shutdown.mjs',
    check: ({ messages, stdout }) => {
      const jobs = messages.map((message) => message.properties?.job)
      const reported = /graceful-shutdown: SIGTERM: (\d+) delivered, 0 failed/.exec(stdout)
      if (reported === null) return `stdout does not report the shutdown: ${JSON.stringify(stdout)}`
      if (jobs.length < 5 || jobs.length !== Number(reported[1])) {
        return `expected the ${reported[1]} jobs reported (at least 5), received ${jobs.length}`
      }
      const expected = jobs.map((_, index) => index + 1)
      if (JSON.stringify([...jobs].sort((a, b) => a - b)) !== JSON.stringify(expected))
        return `jobs missing or repeated: ${jobs}`
      return undefined
    },
  },
  {
    file: 'debug-logging.mjs',
    env: { DEBUG: 'analytics' },
    check: ({ messages, stderr }) =>
      expectMessages(messages, [
        { type: 'identify', userId: 'debug-user' },
        { type: 'track', event: 'Report Exported' },
        { type: 'page', name: 'Reports' },
      ]) ??
      expectText(stderr, /\banalytics\b.*\bqueue/, 'the DEBUG=analytics log of queued messages on stderr') ??
      expectText(stderr, /\banalytics\b.*\bflush/, 'the DEBUG=analytics log of flushes on stderr'),
  },
]

/** Batches received, by write key (each example has its own). */
const receivedByKey = new Map()

const receiver = createServer((req, res) => {
  const chunks = []
  req.on('data', (chunk) => chunks.push(chunk))
  req.on('end', () => {
    const auth = /^Basic (.+)$/.exec(req.headers.authorization ?? '')
    const writeKey = auth === null ? '' : Buffer.from(auth[1], 'base64').toString('utf8').replace(/:$/, '')
    const { batch } = JSON.parse(Buffer.concat(chunks).toString('utf8'))
    receivedByKey.set(writeKey, [...(receivedByKey.get(writeKey) ?? []), ...batch])
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
  })
})
receiver.listen(0, '127.0.0.1')
await once(receiver, 'listening')
const endpoint = `http://127.0.0.1:${receiver.address().port}`

let failures = 0
for (const example of EXAMPLES) {
  const writeKey = `wk_example_${example.file.replace(/\W/g, '_')}_secret`
  const run = await runExample(example.file, {
    TRACKLET_ENDPOINT: endpoint,
    TRACKLET_WRITE_KEY: writeKey,
    ...example.env,
  })
  const messages = receivedByKey.get(writeKey) ?? []
  const problem =
    (run.code === 0 ? undefined : `exited with ${run.code}${run.signal ? ` (${run.signal})` : ''}`) ??
    leakedKey(writeKey, run.stdout + run.stderr) ??
    example.check({ messages, stdout: run.stdout, stderr: run.stderr })
  if (problem === undefined) {
    console.log(`ok    ${example.file} (${messages.length} messages)`)
  } else {
    failures += 1
    console.log(`FAIL  ${example.file}: ${problem}\n--- stdout\n${run.stdout}--- stderr\n${run.stderr}---`)
  }
}

receiver.closeAllConnections()
receiver.close()
process.exitCode = failures === 0 ? 0 : 1

function runExample(file, env) {
  const path = fileURLToPath(new URL(file, import.meta.url))
  const childEnv = { ...process.env, DEBUG: '', ...env }
  return new Promise((resolve) => {
    execFile(process.execPath, [path], { env: childEnv, timeout: TIMEOUT_MS }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : (error.code ?? 'killed'), signal: error?.signal, stdout, stderr })
    })
  })
}

/** Each expected message must have arrived (its fields deep-included), and nothing else. */
function expectMessages(messages, expected) {
  if (messages.length !== expected.length) {
    return `expected ${expected.length} messages, received ${messages.length}: ${JSON.stringify(messages.map(brief))}`
  }
  for (const want of expected) {
    if (!messages.some((message) => includes(message, want)))
      return `missing ${JSON.stringify(want)} in ${JSON.stringify(messages.map(brief))}`
  }
  for (const message of messages) {
    if (
      typeof message.messageId !== 'string' ||
      typeof message.timestamp !== 'string' ||
      message.context?.library?.name !== 'tracklet'
    ) {
      return `a message lacks messageId, timestamp or context.library: ${JSON.stringify(message)}`
    }
  }
  return undefined
}

function includes(actual, want) {
  if (typeof want !== 'object' || want === null) return Object.is(actual, want)
  return (
    typeof actual === 'object' &&
    actual !== null &&
    Object.entries(want).every(([key, value]) => includes(actual[key], value))
  )
}

function brief({ type, event, name, userId, anonymousId }) {
  return { type, event, name, userId, anonymousId }
}

function expectText(text, pattern, what) {
  return pattern.test(text) ? undefined : `${what} does not match ${pattern}`
}

function leakedKey(writeKey, output) {
  const basicAuth = Buffer.from(`${writeKey}:`).toString('base64')
  return output.includes(writeKey) || output.includes(basicAuth) ? 'the write key appears in the output' : undefined
}
