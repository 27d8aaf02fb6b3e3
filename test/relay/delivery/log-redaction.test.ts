import { format } from 'node:util'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { SendsOne as Destination } from '../../../src/relay/destinations/webhooks/sender'
import { log, useLogLevel } from '../../../src/relay/log'
import { openSqliteStore, type SqliteStore } from '../../../src/relay/store/sqlite/sqlite-store'
import type { DeliveryResult } from '../../../src/webhooks/index'
import { testDelivery } from '../fixtures/deliveries'
import { testWorker } from '../fixtures/worker'

const SECRET_URL = 'https://hooks.example.com/in/abc?token=tok-s3cret-123&x=1'
let lines: string[]
let outbox: SqliteStore | undefined
const saved = { enabled: log.enabled, log: log.log }
let releaseLevel: () => void

beforeEach(() => {
  lines = []
  // Failed attempts that will be retried are logged at debug, one line each.
  releaseLevel = useLogLevel('debug')
  log.enabled = true
  log.log = (...args: unknown[]) => lines.push(format(...args))
})
afterEach(() => {
  releaseLevel()
  log.enabled = saved.enabled
  log.log = saved.log
  void outbox?.close()
})

async function attempt(result: DeliveryResult) {
  outbox = await openSqliteStore(':memory:')
  const destination: Destination = { send: async () => result }
  const worker = testWorker({ store: outbox, destination, concurrency: 1 })
  await outbox.enqueue([testDelivery('m1')])
  worker.wake()
  await worker.idle()
  return (await outbox.list({ after: 0, limit: 1 }))[0]!
}

describe('the relay’s debug log', () => {
  const cases: [string, DeliveryResult][] = [
    ['a retryable failure', { ok: false, retryable: true, attempts: [{ url: SECRET_URL, status: 503, ms: 3 }] }],
    ['a dead letter', { ok: false, retryable: false, attempts: [{ url: SECRET_URL, error: 'HTTP 404', ms: 3 }] }],
  ]
  it.each(cases)('names a webhook by origin and path only, never its query string (%s)', async (_name, result) => {
    const delivery = await attempt(result)
    const output = lines.join('\n')
    expect(output).toContain('https://hooks.example.com/in/abc')
    expect(output).not.toContain('tok-s3cret-123')
    expect(output).not.toContain('?token')
    // The delivery log (admin only) keeps the full URL, to tell the webhooks apart.
    expect(delivery.lastError).toContain(SECRET_URL)
  })
})
