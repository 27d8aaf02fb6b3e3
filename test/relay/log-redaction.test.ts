import { format } from 'node:util'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Destination, DestinationResult } from '../../src/relay/delivery/destination'
import { Worker } from '../../src/relay/delivery/worker'
import { log, useLogLevel } from '../../src/relay/log'
import { openSqliteStore, type SqliteStore } from '../../src/relay/store/sqlite/sqlite-store'
import { nextAttemptAt } from '../../src/webhooks/index'

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

async function attempt(result: DestinationResult) {
  outbox = await openSqliteStore(':memory:')
  const destination: Destination = { send: async () => result }
  const worker = new Worker({
    store: outbox,
    destinations: new Map([['web', new Map([['Webhooks', destination]])]]),
    schedule: nextAttemptAt,
    concurrency: 1,
    leaseTimeout: 30_000,
  })
  await outbox.enqueue([
    {
      source: 'web',
      destination: 'Webhooks',
      messageId: 'm1',
      type: 'track',
      json: JSON.stringify({ type: 'track', userId: 'u', event: 'E', messageId: 'm1' }),
    },
  ])
  worker.wake()
  await worker.idle()
  return (await outbox.list({ after: 0, limit: 1 }))[0]!
}

describe('the relay’s debug log', () => {
  it.each([
    ['a retryable failure', { ok: false, retryable: true, attempts: [{ url: SECRET_URL, status: 503, ms: 3 }] }],
    ['a dead letter', { ok: false, retryable: false, attempts: [{ url: SECRET_URL, error: 'HTTP 404', ms: 3 }] }],
  ] as const)('names a webhook by origin and path only, never its query string (%s)', async (_name, result) => {
    const delivery = await attempt(result)
    const output = lines.join('\n')
    expect(output).toContain('https://hooks.example.com/in/abc')
    expect(output).not.toContain('tok-s3cret-123')
    expect(output).not.toContain('?token')
    // The delivery log (admin only) keeps the full URL, to tell the webhooks apart.
    expect(delivery.lastError).toContain(SECRET_URL)
  })
})
