import { inspect } from 'node:util'
import { describe, expect, it, vi } from 'vitest'
import type * as Errors from '../../src/sdk/errors'

const message = { type: 'track', event: 'E', userId: 'u', messageId: 'm-1' } as never

/** A fresh copy of the errors module, as when an app loads both the ESM and the CommonJS build. */
async function freshCopy(): Promise<typeof Errors> {
  vi.resetModules()
  return import('../../src/sdk/errors')
}

describe('AnalyticsError instanceof, across two copies of the module', () => {
  it('recognises any Tracklet analytics error from another copy as an AnalyticsError', async () => {
    const mine = await freshCopy()
    const theirs = await freshCopy()
    expect(theirs.AnalyticsError).not.toBe(mine.AnalyticsError)

    const errors = [
      new theirs.InvalidMessageError('userId or anonymousId is required', { analyticsMessage: message }),
      new theirs.MessageTooLargeError(40_000, 32_000, { analyticsMessage: message }),
      new theirs.QueueFullError(10, { analyticsMessage: message }),
      new theirs.ClosedError('closeAndFlush() timed out', { analyticsMessage: message }),
      new theirs.DeliveryError(
        'HTTP 503',
        { url: 'http://x/v1/batch', status: 503, attempts: 7 },
        { analyticsMessage: message },
      ),
    ]
    for (const error of errors) {
      expect(error instanceof mine.AnalyticsError).toBe(true)
      expect(error instanceof Error).toBe(true)
    }
  })

  it('recognises a subclass from another copy by its code, and only that subclass', async () => {
    const mine = await freshCopy()
    const theirs = await freshCopy()
    const closed = new theirs.ClosedError('closed', { analyticsMessage: message })
    const delivery = new theirs.DeliveryError(
      'HTTP 400',
      { url: 'u', status: 400, attempts: 1 },
      { analyticsMessage: message },
    )

    expect(closed instanceof mine.ClosedError).toBe(true)
    expect(closed instanceof mine.DeliveryError).toBe(false)
    expect(closed instanceof mine.QueueFullError).toBe(false)
    expect(delivery instanceof mine.DeliveryError).toBe(true)
    expect(delivery instanceof mine.ClosedError).toBe(false)
    // Within one copy, as ever.
    expect(new mine.QueueFullError(1, { analyticsMessage: message }) instanceof mine.QueueFullError).toBe(true)
    expect(new mine.QueueFullError(1, { analyticsMessage: message }) instanceof mine.ClosedError).toBe(false)
  })

  it('recognises nothing that is not a Tracklet analytics error, whatever its code', async () => {
    const { AnalyticsError, ClosedError } = await freshCopy()
    const lookalike = Object.assign(new Error('closed'), { code: 'ERR_CLOSED' })
    for (const value of [lookalike, { code: 'ERR_CLOSED' }, null, undefined, 'ERR_CLOSED', 42]) {
      expect(value instanceof AnalyticsError).toBe(false)
      expect(value instanceof ClosedError).toBe(false)
    }
  })

  it('keeps prototype instanceof for an application subclass, without matching others by code', async () => {
    const { AnalyticsError } = await freshCopy()
    class AppError extends AnalyticsError {}
    const mine = new AppError('ERR_CLOSED', 'mine', { analyticsMessage: message })
    const theirs = await freshCopy()
    expect(mine instanceof AppError).toBe(true)
    expect(mine instanceof AnalyticsError).toBe(true)
    expect(new theirs.ClosedError('closed', { analyticsMessage: message }) instanceof AppError).toBe(false)
  })

  it('keeps the brand off the error itself: nothing new in its keys or when it is logged', async () => {
    const { ClosedError } = await freshCopy()
    const error = new ClosedError('closed', { analyticsMessage: message })
    expect(Reflect.ownKeys(error).filter((key) => typeof key === 'symbol')).toEqual([])
    expect(inspect(error)).not.toContain('tracklet.AnalyticsError')
    expect(error.code).toBe('ERR_CLOSED')
  })
})
