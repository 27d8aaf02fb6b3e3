// The same checks for both module systems: each part of the package loads and does its job.
const assert = require('node:assert/strict')
const http = require('node:http')

// HMAC-SHA1 of this exact body keyed with "s3cret", computed independently with openssl.
const BODY = '{"type":"track","event":"Café ☕"}'
const SIGNATURE = '5c7e2b3cdf0c78410e472b01713d65eeba042188'

async function checkPackage({ Analytics, sign, verifySignature, formatMessage, WebhookDestination, createRelay }) {
  assert.equal(sign(BODY, 's3cret'), SIGNATURE)
  assert.equal(verifySignature(BODY, SIGNATURE, 's3cret'), true)
  assert.equal(verifySignature(BODY, SIGNATURE, 'wrong'), false)
  assert.equal(
    formatMessage({ type: 'alias', userId: 'u', previousId: 'p', messageId: 'm', timestamp: '2020-01-01T00:00:00Z' })[
      'Previous ID'
    ],
    'p',
  )
  assert.equal(typeof WebhookDestination, 'function')

  // A relay on a free port with an in-memory outbox, fed by the SDK, delivering to a receiver.
  const received = []
  const receiver = http.createServer((req, res) => {
    let body = ''
    req.on('data', (chunk) => (body += chunk))
    req.on('end', () => {
      received.push({ body, signature: req.headers['x-signature'] })
      res.end('ok')
    })
  })
  await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  const relay = await createRelay({
    port: 0,
    host: '127.0.0.1',
    database: ':memory:',
    adminToken: 'smoke-admin',
    allowPrivateNetworks: true,
    sources: [
      {
        name: 'smoke',
        writeKey: 'SMOKE_KEY',
        destinations: {
          Webhooks: { webhooks: [{ url: `http://127.0.0.1:${receiver.address().port}/hook` }], sharedSecret: 's3cret' },
        },
      },
    ],
  })
  try {
    const analytics = new Analytics('SMOKE_KEY', { endpoint: relay.url, flushAt: 1 })
    const settled = new Promise((resolve, reject) =>
      analytics.track({ userId: 'u1', event: 'Smoke Tested' }, (err) => (err ? reject(err) : resolve())),
    )
    await settled
    await analytics.closeAndFlush()
    for (let i = 0; i < 200 && received.length === 0; i++) await new Promise((r) => setTimeout(r, 25))
    assert.equal(received.length, 1, 'the receiver got the message')
    const message = JSON.parse(received[0].body)
    assert.equal(message.event, 'Smoke Tested')
    assert.equal(verifySignature(received[0].body, received[0].signature, 's3cret'), true)
  } finally {
    await relay.close()
    await new Promise((resolve) => receiver.close(resolve))
  }
}

module.exports = { checkPackage }
