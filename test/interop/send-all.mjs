// Sends one call of every type through a real, published client with its defaults, as a user
// would, then flushes it and lets the process end on its own: a client that kept it alive would
// make the test fail. Prints one JSON line: the client's name and version, the request bodies it
// sent (as the relay received them, decoded) and any error it reported.
//
//   node test/interop/send-all.mjs segment|rudder <relayUrl> <writeKey>
import { createRequire } from 'node:module'
import { gunzipSync } from 'node:zlib'

const [client, relayUrl, writeKey] = process.argv.slice(2)
const require = createRequire(import.meta.url)

/** The calls, in order: [type, fields]. Each message id names the client and the type. */
const calls = (extra) => [
  ['identify', { userId: 'u-1', traits: { email: 'a@b.co', plan: 'pro' } }],
  [
    'track',
    { userId: 'u-1', event: 'Order Completed', properties: { revenue: 9.99, currency: 'EUR' }, ...extra.track },
  ],
  [
    'page',
    {
      userId: 'u-1',
      name: 'Pricing',
      properties: {
        url: 'https://example.com/pricing',
        path: '/pricing',
        title: 'Pricing',
        referrer: 'https://example.com/',
      },
    },
  ],
  [
    'screen',
    {
      userId: 'u-1',
      name: 'Home',
      context: {
        app: { name: 'demo', version: '1.2.3' },
        os: { name: 'iOS', version: '17.4' },
        device: { model: 'iPhone15,2' },
      },
    },
  ],
  ['group', { userId: 'u-1', groupId: 'acme', traits: { name: 'Acme', employees: 120 } }],
  ['alias', { previousId: 'anon-7', userId: 'u-1' }],
]

const requests = []
const errors = []
const report = (error) => {
  if (error) errors.push(String(error?.stack ?? error))
}

if (client === 'segment') {
  const { Analytics } = await import('@segment/analytics-node')
  // Only where to send: the rest is the client's defaults (flushAt 15, JSON, Basic auth).
  const analytics = new Analytics({ writeKey, host: relayUrl })
  analytics.on('http_request', (request) => requests.push({ headers: request.headers, body: JSON.parse(request.body) }))
  analytics.on('error', report)
  // A historical import: the track call is given its time.
  for (const [type, fields] of calls({ track: { timestamp: new Date('2024-01-02T03:04:05.678Z') } })) {
    analytics[type]({ ...fields, messageId: `segment-${type}` }, report)
  }
  await analytics.closeAndFlush()
  console.log(JSON.stringify({ client, version: analytics.VERSION, requests, errors }))
} else if (client === 'rudder') {
  const Analytics = require('@rudderstack/rudder-sdk-node')
  // Only where to send: gzip on, a form Content-Type, flushAt 20, no persistence queue (Redis).
  const analytics = new Analytics(writeKey, { dataPlaneUrl: relayUrl, logLevel: 'error' })
  const seen = new Set()
  // The callback gets the request body as sent: gzipped, with the client's defaults.
  const onSent = (error, data) => {
    report(error)
    if (data === undefined || seen.has(data)) return
    seen.add(data)
    requests.push({
      body: JSON.parse(Buffer.isBuffer(data) ? gunzipSync(data).toString('utf8') : JSON.stringify(data)),
    })
  }
  // A device whose clock is an hour slow made the track call: originalTimestamp is its clock.
  const slowClock = new Date(Date.now() - 3_600_000)
  for (const [type, fields] of calls({ track: { originalTimestamp: slowClock } })) {
    analytics[type]({ ...fields, messageId: `rudder-${type}` }, onSent)
  }
  // The client has no close(): flush() sends what is queued and clears its flush timer.
  await analytics.flush()
  // Callbacks run in a setImmediate after each request settles.
  await new Promise((resolve) => setImmediate(resolve))
  console.log(
    JSON.stringify({ client, version: require('@rudderstack/rudder-sdk-node/package.json').version, requests, errors }),
  )
} else {
  console.error(`usage: send-all.mjs segment|rudder <relayUrl> <writeKey> (got ${client})`)
  process.exitCode = 2
}
