import { describe, expect, it } from 'vitest'
import { FUNCTION_HEALTH_WINDOW_MS } from '../../../src/relay/config/function-limits'
import { FunctionCallLog } from '../../../src/relay/features/functions/recent-calls'
import type { FunctionResult } from '../../../src/relay/features/functions/result'

const base = { logs: [], logsTruncated: false, ms: 1 }
const sent: FunctionResult = { ...base, kind: 'pass' }
const timedOut: FunctionResult = { ...base, kind: 'error', code: 'ERR_FUNCTION_TIMEOUT', message: 'ran past 1000 ms' }
const retried: FunctionResult = { ...base, kind: 'retry', message: 'lookup down' }

describe("a relay's log of recent function calls (the endpoints view)", () => {
  it('counts calls and failures per route over the window, with the last failure', () => {
    const log = new FunctionCallLog()
    const t = 1_000_000_000_000
    log.record('web', 'Webhooks', sent, t)
    log.record('web', 'Webhooks', timedOut, t + 1_000)
    log.record('web', 'Webhooks', retried, t + 2_000)
    log.record('app', 'Webhooks', sent, t + 2_000)
    expect(log.recent(t + 3_000)).toEqual([
      {
        source: 'web',
        destination: 'Webhooks',
        calls: 3,
        failed: 2,
        lastError: { error: 'RetryError: lookup down', at: t + 2_000 },
      },
      { source: 'app', destination: 'Webhooks', calls: 1, failed: 0 },
    ])
  })

  it('forgets calls older than the window, and a route with none left', () => {
    const log = new FunctionCallLog()
    const t = 1_000_000_000_000
    log.record('web', 'Webhooks', timedOut, t)
    log.record('app', 'Webhooks', sent, t)
    const later = t + FUNCTION_HEALTH_WINDOW_MS + 120_000
    log.record('web', 'Webhooks', sent, later)
    expect(log.recent(later)).toEqual([{ source: 'web', destination: 'Webhooks', calls: 1, failed: 0 }])
  })
})
