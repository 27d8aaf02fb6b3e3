// Runs against the built package: the relay loads the Webhooks destination's own built file
// instead of a copy, so its errors are `instanceof` the classes users import from
// tracklet/webhooks, in both module systems.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const STORED_KEY = 'tracklet.webhooks.sendStored.v1'

for (const [format, load] of [
  ['import()', (name) => import(name)],
  ['require()', async (name) => require(name)],
]) {
  const webhooks = await load('tracklet/webhooks')
  const relay = await load('tracklet/relay')
  const error = await relay
    .createRelay({
      database: ':memory:',
      sources: [{ name: 'web', writeKey: 'k', destinations: { Webhooks: { webhooks: [] } } }],
    })
    .then(
      () => assert.fail('a source with no webhooks must be refused'),
      (caught) => caught,
    )
  assert.ok(
    error.cause instanceof webhooks.WebhookConfigError,
    `${format}: the relay's WebhookConfigError is the one users import`,
  )
  assert.ok(error.cause instanceof webhooks.WebhookError, `${format}: … and a WebhookError`)
  // The relay sends stored messages through the destination's stored path (src/webhooks/stored.ts),
  // found by a registry key both builds must name alike: otherwise it falls back, unseen, to the
  // validating send.
  assert.equal(
    typeof webhooks.WebhookDestination.prototype[Symbol.for(STORED_KEY)],
    'function',
    `${format}: the built destination offers the stored path under ${STORED_KEY}`,
  )
}

// Each format's library build holds the class once (the CLI, a program of its own, may bundle it).
const library = new URL('../../dist/', import.meta.url)
for (const extension of ['.js', '.cjs']) {
  const files = ['index', 'webhooks/index', 'relay/index'].map((name) => `${name}${extension}`)
  const chunks =
    extension === '.js' ? readdirSync(library).filter((name) => name.startsWith('chunk-') && name.endsWith('.js')) : []
  const holders = [...files, ...chunks].filter((name) =>
    /WebhookError = class|class WebhookError/.test(readFileSync(new URL(name, library), 'utf8')),
  )
  assert.equal(
    holders.length,
    1,
    `WebhookError is defined once in the ${extension} build (found in ${holders.join(', ')})`,
  )
}
// … and the relay's build asks for it under the same key, in both formats.
for (const extension of ['.js', '.cjs']) {
  const relayFiles = [`relay/index${extension}`, ...readdirSync(library).filter((name) => name.endsWith(extension))]
  assert.ok(
    relayFiles.some((name) => readFileSync(new URL(name, library), 'utf8').includes(STORED_KEY)),
    `the ${extension} relay build names ${STORED_KEY}`,
  )
}
console.log('single copies: ok')
