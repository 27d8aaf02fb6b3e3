import { format } from 'node:util'
import createDebug from 'debug'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { Analytics } from '../../src/index'
import { log } from '../../src/sdk/log'
import { type Receiver, startReceiver, status } from './helpers/receiver'

const WRITE_KEY = 'wk_live_TOP_SECRET'
let receiver: Receiver
let lines: string[]
const originalLog = log.log

beforeEach(() => {
  lines = []
  createDebug.enable('analytics')
  log.log = (...args: unknown[]) => lines.push(format(...args))
})

afterEach(async () => {
  createDebug.disable()
  log.log = originalLog
  await receiver.close()
})

it('DEBUG=analytics shows queueing, flushes with count, bytes and status, retries and drops — never the write key', async () => {
  receiver = await startReceiver((request, response, index) =>
    index === 0 ? status(503)(request, response, index) : response.end('{}'),
  )
  const analytics = new Analytics(WRITE_KEY, { endpoint: receiver.endpoint })
  analytics.track({ userId: 'u', event: 'logged' })
  analytics.track({ userId: 'u' } as never)
  await analytics.flush()
  await analytics.closeAndFlush()

  const text = lines.join('\n')
  expect(text).toMatch(/queue: track [0-9a-f-]{36} \(\d+ bytes\)/)
  expect(text).toMatch(/flush: 1 messages, \d+ bytes: HTTP 503/)
  expect(text).toMatch(/retry: 1 messages in \d+ ms \(attempt 2\): HTTP 503/)
  expect(text).toMatch(/flush: 1 messages, \d+ bytes: HTTP 200/)
  expect(text).toContain('drop: invalid track call: track needs event')
  expect(text).not.toContain(WRITE_KEY)
  expect(text).not.toContain(Buffer.from(`${WRITE_KEY}:`).toString('base64'))
})
