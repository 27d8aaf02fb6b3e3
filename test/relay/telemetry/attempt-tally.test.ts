import { Counter, Histogram, Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import type { SettledAttempt } from '../../../src/relay/delivery/worker'
import { AttemptTally } from '../../../src/relay/telemetry/attempt-tally'

function series() {
  const registers = [new Registry()]
  return {
    attempts: new Counter({
      name: 'attempts',
      help: 'a',
      labelNames: ['source', 'destination', 'outcome'] as const,
      registers,
    }),
    duration: new Histogram({
      name: 'duration',
      help: 'd',
      labelNames: ['source', 'destination'] as const,
      buckets: [0.01, 1],
      registers,
    }),
    requests: new Counter({
      name: 'requests',
      help: 'r',
      labelNames: ['source', 'destination', 'status_class'] as const,
      registers,
    }),
  }
}

function attempt(source: string, statuses: (number | undefined)[], ms: number): SettledAttempt {
  return {
    source,
    destination: 'Webhooks',
    ms,
    outcome: {
      id: 1,
      at: 0,
      requests: statuses.map((status) => ({
        url: 'https://a.example/',
        ms,
        ...(status === undefined ? {} : { status }),
      })),
      next: { status: 'delivered' },
    },
  }
}

async function values(s: ReturnType<typeof series>) {
  const [attempts, duration, requests] = await Promise.all([s.attempts.get(), s.duration.get(), s.requests.get()])
  return {
    attempts: attempts.values.map(({ labels, value }) => [labels.source, labels.outcome, value]),
    requests: requests.values.map(({ labels, value }) => [labels.source, labels.status_class, value]),
    duration: duration.values
      .filter(({ metricName }) => metricName !== 'duration_bucket')
      .map(({ metricName, labels, value }) => [metricName, labels.source, value]),
  }
}

describe('the attempt tally', () => {
  it('adds exactly what was counted, per route, once flushed', async () => {
    const s = series()
    const tally = new AttemptTally(s)
    tally.add(attempt('web', [200], 20), 'delivered')
    tally.add(attempt('web', [503, undefined], 500), 'retried')
    tally.add(attempt('ios', [410], 5), 'dead_lettered')
    expect((await values(s)).attempts).toEqual([])

    tally.flush()
    expect(await values(s)).toEqual({
      attempts: [
        ['web', 'delivered', 1],
        ['web', 'retried', 1],
        ['ios', 'dead_lettered', 1],
      ],
      requests: [
        ['web', '2xx', 1],
        ['web', '5xx', 1],
        ['web', 'error', 1],
        ['ios', '4xx', 1],
      ],
      duration: [
        ['duration_sum', 'web', 0.52],
        ['duration_count', 'web', 2],
        ['duration_sum', 'ios', 0.005],
        ['duration_count', 'ios', 1],
      ],
    })

    // Counted once: a second flush adds nothing, a new attempt adds one.
    tally.flush()
    tally.add(attempt('web', [200], 10), 'delivered')
    tally.flush()
    expect((await values(s)).attempts).toContainEqual(['web', 'delivered', 2])
  })

  it('flushes by itself once a thousand durations wait, so memory stays bounded between scrapes', async () => {
    const s = series()
    const tally = new AttemptTally(s)
    for (let i = 0; i < 1023; i++) tally.add(attempt('web', [200], 1), 'delivered')
    expect((await values(s)).attempts).toEqual([])
    tally.add(attempt('web', [200], 1), 'delivered')
    expect((await values(s)).attempts).toEqual([['web', 'delivered', 1024]])
  })
})
