// Runs against the built package: the relay loads the Webhooks destination's own built file
// instead of a copy, so its errors are `instanceof` the classes users import from
// tracklet/webhooks, in both module systems.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)

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
console.log('single copies: ok')
