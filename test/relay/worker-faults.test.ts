import { afterEach, describe, expect, it } from 'vitest'
import { openDatabase, type RelayDatabase } from '../../src/relay/database'
import type { Destination, DestinationResult, RetrySchedule } from '../../src/relay/destination'
import { type AttemptOutcome, Outbox } from '../../src/relay/outbox'
import { Worker } from '../../src/relay/worker'
import { nextAttemptAt } from '../../src/webhooks/index'

const T0 = Date.parse('2026-01-01T00:00:00.000Z')
const opened: RelayDatabase[] = []

afterEach(() => {
  for (const db of opened.splice(0)) if (db.open) db.close()
})

const unavailable: DestinationResult = {
  ok: false,
  retryable: true,
  attempts: [{ url: 'https://a.example/hook', status: 503, ms: 8 }],
}

/** An outbox whose `record` throws (a full disk, a busy database) until `failures` is spent. */
class FlakyOutbox extends Outbox {
  failures = 0
  recordCalls = 0
  override record(outcomes: readonly AttemptOutcome[]): void {
    this.recordCalls++
    if (this.failures > 0) {
      this.failures--
      throw new Error('SQLITE_FULL: database or disk is full')
    }
    super.record(outcomes)
  }
}

/** A worker over an in-memory outbox with a frozen clock, one source `web`, and one pending delivery. */
function setup(destination: Destination, schedule: RetrySchedule = (state) => nextAttemptAt(state, () => 0.5)) {
  const db = openDatabase(':memory:')
  opened.push(db)
  const outbox = new FlakyOutbox(db, () => T0)
  const worker = new Worker({
    outbox,
    destinations: new Map([['web', new Map([['Webhooks', destination]])]]),
    schedule,
    concurrency: 2,
    now: () => T0,
  })
  outbox.enqueue([
    {
      source: 'web',
      destination: 'Webhooks',
      messageId: 'm1',
      type: 'track',
      json: JSON.stringify({ type: 'track', userId: 'u', event: 'E', messageId: 'm1' }),
    },
  ])
  const delivery = () => outbox.list({ after: 0, limit: 1 })[0]!
  return { outbox, worker, delivery }
}

function counting(result: DestinationResult): Destination & { sends: number } {
  const destination = {
    sends: 0,
    async send() {
      destination.sends++
      return result
    },
  }
  return destination
}

describe('the worker, when handling an attempt’s outcome fails', () => {
  it('reschedules by its own backoff a delivery whose Retry-After is not a finite number', async () => {
    const destination = counting({ ...unavailable, retryAfterMs: Number.POSITIVE_INFINITY })
    const { worker, delivery } = setup(destination)
    worker.wake()
    await worker.idle()
    expect(destination.sends).toBe(1)
    // The backoff of a first failure with the jitter pinned to the middle: 0.75 s.
    expect(delivery()).toMatchObject({
      status: 'pending',
      nextAttemptAt: new Date(T0 + 750).toISOString(),
      lastError: 'https://a.example/hook: HTTP 503',
    })
  })

  it('dead-letters the delivery with the error when the retry rule itself throws, and keeps working', async () => {
    const destination = counting(unavailable)
    const { worker, delivery, outbox } = setup(destination, () => {
      throw new RangeError('the schedule broke')
    })
    worker.wake()
    await worker.idle()
    expect(delivery()).toMatchObject({ status: 'failed' })
    expect(delivery().lastError).toContain('the schedule broke')
    expect(delivery().attempts).toHaveLength(1)

    // The lane is free again: a new delivery is taken.
    outbox.enqueue([
      {
        source: 'web',
        destination: 'Webhooks',
        messageId: 'm2',
        type: 'track',
        json: JSON.stringify({ type: 'track', userId: 'u', event: 'E', messageId: 'm2' }),
      },
    ])
    worker.wake()
    await worker.idle()
    expect(destination.sends).toBe(2)
  })
})

describe('the worker, when writing outcomes fails', () => {
  it('keeps the outcome and writes it once the outbox recovers, without sending again meanwhile', async () => {
    const destination = counting(unavailable)
    const { worker, delivery, outbox } = setup(destination)
    outbox.failures = 3
    worker.wake()
    await worker.idle()
    expect(outbox.recordCalls).toBe(4)
    expect(destination.sends).toBe(1)
    expect(delivery()).toMatchObject({
      status: 'pending',
      nextAttemptAt: new Date(T0 + 750).toISOString(),
      lastError: 'https://a.example/hook: HTTP 503',
    })
    expect(delivery().attempts).toHaveLength(1)
  })
})
