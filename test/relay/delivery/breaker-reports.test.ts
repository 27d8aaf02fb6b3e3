import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { Reports, type Unreported } from '../../../src/relay/delivery/breaker-reports'

beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

const URL_A = 'https://a.example/'
const failed = (status: number, retryAfterMs?: number) => ({
  url: URL_A,
  status,
  ms: 1,
  ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
})

function setup() {
  const written: [string, Unreported][] = []
  const state = { failing: false }
  const reports = new Reports(
    async (url, unreported) => {
      if (state.failing) throw new Error('down')
      written.push([url, unreported])
    },
    () => {},
  )
  return { reports, written, state }
}

describe('the breaker’s reports', () => {
  it('count a URL’s failures together, with the last error and the longest Retry-After', async () => {
    const { reports, written } = setup()
    reports.add(URL_A, 'down', failed(503, 2000), false)
    reports.add(URL_A, 'down', failed(429, 1000), false)
    expect(reports.pending(URL_A)).toMatchObject({ failures: 2 })
    await vi.advanceTimersByTimeAsync(5)
    expect(written).toEqual([
      [URL_A, { failures: 2, answered: false, error: 'HTTP 429', retryAfterMs: 2000, status: 429 }],
    ])
  })

  it('let an answer break the run of failures', async () => {
    const { reports, written } = setup()
    reports.add(URL_A, 'down', failed(503), false)
    reports.add(URL_A, 'up', failed(200), false)
    reports.add(URL_A, 'down', failed(500), false)
    await vi.advanceTimersByTimeAsync(5)
    // The statuses alerts carry: the last failure's, and the answer's (only a 2xx is a recovery).
    expect(written[0]![1]).toMatchObject({
      failures: 1,
      answered: true,
      error: 'HTTP 500',
      status: 500,
      answeredStatus: 200,
    })
  })

  it('write a circuit about to open at once', async () => {
    const { reports, written } = setup()
    reports.add(URL_A, 'down', failed(503), true)
    await vi.advanceTimersByTimeAsync(0)
    expect(written).toHaveLength(1)
  })

  it('add what failed to be written to what came since', async () => {
    const { reports, written, state } = setup()
    state.failing = true
    reports.add(URL_A, 'down', failed(503), false)
    await vi.advanceTimersByTimeAsync(5)
    reports.add(URL_A, 'down', failed(502), false)
    state.failing = false
    await vi.advanceTimersByTimeAsync(50)
    expect(written).toEqual([
      [URL_A, { failures: 2, answered: false, error: 'HTTP 502', retryAfterMs: undefined, status: 502 }],
    ])
    expect(reports.busy).toBe(false)
  })
})
