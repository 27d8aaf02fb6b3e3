import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { CircuitStore } from '../../../src/relay/store/circuits'
import type { Store } from '../../../src/relay/store/store'
import { openTestStore, STORE_KINDS } from '../../support/stores'
import { delivery, T0 } from '../delivery/breaker-helpers'

// An operator's pause of a webhook URL, in the circuits every relay on the database shares: no
// probe, deliveries parked without their retry window running, and resume drains at once.
const URL_A = 'https://a.example/hook?token=t'
const URL_B = 'https://b.example/hook'
const ROUTES = [{ source: 'web', destination: 'Webhooks' }]
const WINDOW = 4 * 3600_000
const RECHECK = 5 * 60_000

describe.each(STORE_KINDS)('pausing a URL (%s)', (kind) => {
  let store: Store
  let circuits: CircuitStore
  // The store's clock (and the database's, on PostgreSQL), moved by each claim below.
  let clock = T0
  beforeEach(async () => {
    clock = T0
    store = await openTestStore(kind, () => clock)
    circuits = store.circuits
  })
  afterEach(async () => {
    await store.close()
  })

  const claim = (now: number, owner = 'relay-a') => {
    clock = now
    return store.claim({ source: 'web', limit: 10, owner, leaseMs: 30_000 })
  }
  const park = (ids: number[], urls: string[], now: number) =>
    circuits.park({ ids, owner: 'relay-a', urls, now, until: now + RECHECK, window: WINDOW, error: 'paused' })

  it('pauses whatever the circuit was, keeping its failures and last error, and voids a probe held', async () => {
    await circuits.fail({
      url: URL_A,
      failures: 3,
      threshold: 3,
      now: T0,
      firstProbeAt: T0 + 1000,
      notBefore: undefined,
      error: 'HTTP 503',
    })
    await circuits.takeProbe(URL_A, 'relay-b', T0 + 1000, T0 + 30_000)
    expect(await circuits.pause(URL_A, T0 + 2000)).toMatchObject({
      state: 'paused',
      failures: 3,
      lastError: 'HTTP 503',
      pausedAt: T0 + 2000,
      nextProbeAt: undefined,
      probeOwner: undefined,
    })
    // The probe's holder cannot reopen it, and no relay can take a probe while it is paused.
    expect(await circuits.failProbe(URL_A, 'relay-b', T0 + 9000, 'HTTP 503', T0 + 3000)).toBeUndefined()
    expect(await circuits.takeProbe(URL_A, 'relay-c', T0 + 9e9, T0 + 9e9)).toBeUndefined()
    // A closed URL is paused too; pausing again keeps when it was paused.
    expect(await circuits.pause(URL_B, T0)).toMatchObject({ state: 'paused', failures: 0, pausedAt: T0 })
    expect(await circuits.pause(URL_B, T0 + 5)).toMatchObject({ state: 'paused', pausedAt: T0 })
  })

  it('is not ended by an answer or a failure to a request still in flight', async () => {
    await circuits.pause(URL_A, T0)
    expect(await circuits.succeed(URL_A, ROUTES, T0 + 1)).toEqual({ wasOpen: false, woken: 0, paused: true })
    expect(
      await circuits.fail({
        url: URL_A,
        failures: 9,
        threshold: 3,
        now: T0 + 2,
        firstProbeAt: T0 + 10,
        notBefore: T0 + 20,
        error: 'HTTP 500',
      }),
    ).toMatchObject({ state: 'paused', failures: 9, nextProbeAt: undefined, lastError: 'HTTP 500' })
  })

  it('parks deliveries behind paused URLs without their window running, and resume makes them due at once', async () => {
    await store.enqueue([delivery('web', 'm1')])
    await circuits.pause(URL_A, T0)
    const [m1] = await claim(T0)
    expect(await park([m1!.id], [URL_A], T0)).toEqual([m1!.id])
    // Looked at again every recheck, for five hours, never past its window: still pending, and
    // each claim hands back a window that has not started to run.
    let now = T0
    for (let look = 1; look <= 60; look++) {
      now = T0 + look * RECHECK
      const [again] = await claim(now)
      expect(again).toMatchObject({ id: m1!.id, firstAttemptAt: now })
      expect(await park([m1!.id], [URL_A], now)).toEqual([m1!.id])
    }
    expect(now - T0).toBeGreaterThan(WINDOW)
    clock = now
    expect(await store.nextDueIn('web')).toBe(RECHECK)

    const resumedAt = now + 60_000
    expect(await circuits.resume(URL_A, ROUTES, resumedAt)).toEqual({ wasPaused: true, woken: 1 })
    expect(await circuits.get([URL_A])).toEqual([])
    // Due at once, its window starting at the resume: four full hours left.
    const [due] = await claim(resumedAt)
    expect(due).toMatchObject({ id: m1!.id, firstAttemptAt: resumedAt })
    expect(await circuits.resume(URL_A, ROUTES, resumedAt)).toEqual({ wasPaused: false, woken: 0 })
  })

  it('gives back only the paused time of a window that had started', async () => {
    await store.enqueue([delivery('web', 'm1')])
    const [m1] = await claim(T0)
    // Attempted at T0 and failed; paused an hour later for two hours.
    await store.record([
      {
        id: m1!.id,
        at: T0,
        requests: [{ url: URL_A, status: 503, ms: 3 }],
        next: { status: 'pending', nextAttemptAt: T0 + 3600_000, error: 'HTTP 503' },
      },
    ])
    await circuits.pause(URL_A, T0 + 3600_000)
    const [held] = await claim(T0 + 3600_000)
    expect(held).toMatchObject({ firstAttemptAt: T0 })
    await park([m1!.id], [URL_A], T0 + 3600_000)
    await circuits.resume(URL_A, ROUTES, T0 + 3 * 3600_000)
    const [due] = await claim(T0 + 3 * 3600_000)
    // Two hours paused: the window now runs as if it had started two hours later.
    expect(due).toMatchObject({ id: m1!.id, firstAttemptAt: T0 + 2 * 3600_000 })
  })

  it('keeps the window running behind a URL that is open and another that is paused', async () => {
    await store.enqueue([delivery('web', 'm1')])
    await circuits.fail({
      url: URL_B,
      failures: 3,
      threshold: 3,
      now: T0,
      firstProbeAt: T0 + 1000,
      notBefore: undefined,
      error: 'HTTP 503',
    })
    await circuits.pause(URL_A, T0)
    const [m1] = await claim(T0)
    expect(await park([m1!.id], [URL_A, URL_B], T0)).toEqual([m1!.id])
    const [again] = await claim(T0 + RECHECK)
    expect(again).toMatchObject({ firstAttemptAt: T0 })
  })
})
