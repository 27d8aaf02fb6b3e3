import type { DueDelivery } from './due-delivery'

/**
 * Where a webhook URL's circuit stands. `closed`: requests go out. `open`: none does; one probe
 * is sent when `nextProbeAt` comes. `half-open`: a relay holds that probe (its lease on the row).
 * `paused`: an operator paused the URL; nothing goes there, not even a probe, until resumed.
 */
export type CircuitState = 'closed' | 'open' | 'half-open' | 'paused'

/**
 * One URL's circuit as the store keeps it. A URL without a row is closed with no failures: a row
 * exists only while its receiver has been failing.
 */
export interface Circuit {
  /** The webhook URL, whole, as configured. */
  url: string
  state: CircuitState
  /** Failed requests in a row (a timeout, a network error, 429, 5xx), counted by every relay. */
  failures: number
  /** Failed probes since the circuit opened: the wait before the next probe grows with them. */
  probes: number
  /** When it opened, epoch ms (while not closed). */
  openedAt: number | undefined
  /** When the next probe may go, epoch ms (while not closed). */
  nextProbeAt: number | undefined
  /** The relay holding the probe (while half-open). */
  probeOwner: string | undefined
  /** When that relay's hold on the probe runs out, epoch ms: then another relay may probe. */
  probeLeaseUntil: number | undefined
  /** Why the last failed request failed: `HTTP 503`, `timed out after 5000 ms without a response`… */
  lastError: string | undefined
  /** When an operator paused it, epoch ms (while paused). */
  pausedAt: number | undefined
}

/** The deliveries that go to a URL: those of one destination of one source. */
export interface DeliveryRoute {
  source: string
  destination: string
}

/** What {@link CircuitStore.fail} is told: failed requests to one URL since the last report. */
export interface FailureReport {
  url: string
  /** How many requests failed (at least 1). */
  failures: number
  /** Failures in a row that open a closed circuit. */
  threshold: number
  now: number
  /** When the first probe goes if this report opens the circuit, epoch ms. */
  firstProbeAt: number
  /** A receiver's `Retry-After` as an instant, epoch ms: an open circuit's next probe is not sooner. */
  notBefore: number | undefined
  /** The last failure, as {@link Circuit.lastError}. */
  error: string
}

/** What {@link CircuitStore.park} is asked: deliveries to hold back while every one of their URLs is open. */
export interface ParkRequest {
  /** Deliveries leased to `owner`. */
  ids: readonly number[]
  owner: string
  /** Every URL the deliveries go to: they are parked only while none of these circuits is closed. */
  urls: readonly string[]
  now: number
  /** When they are looked at again at the latest, epoch ms (a missed wake-up costs no more than this). */
  until: number
  /** The retry window, ms: a parked delivery is due again when its window ends, if that is sooner. */
  window: number
  /** What the delivery log shows meanwhile, such as `circuit open for https://… (next probe at …)`. */
  error: string
}

/**
 * The circuits of the webhook URLs, shared by every relay on one database, and the few operations
 * on deliveries the circuit breaker needs. Each method is one atomic statement (or transaction),
 * so relays racing on the same row never both win: only one holds a probe at a time.
 */
export interface CircuitStore {
  /** The circuits of these URLs that have a row. */
  get(urls: readonly string[]): Promise<Circuit[]>

  /**
   * Counts failed requests to a URL. A closed circuit whose run of failures reaches the threshold
   * opens, its first probe at `firstProbeAt`; an open one only moves its next probe to
   * `notBefore` when that is later. Returns the circuit as it now stands.
   */
  fail(report: FailureReport): Promise<Circuit>

  /**
   * A request to the URL was answered (not 429 or 5xx): its circuit closes, and its row goes. If it
   * was open (or half-open), every pending delivery of `routes` due after `now` is due at `now`, in
   * the same transaction: the backlog drains at once, and a relay dying in between cannot strand it.
   * A paused URL stays paused (`paused: true`): an answer does not end an operator's pause.
   */
  succeed(url: string, routes: readonly DeliveryRoute[], now: number): Promise<SucceedResult>

  /**
   * Takes the probe of an open circuit whose probe is due at `now` and not held (or whose holder's
   * lease ran out): it becomes half-open, held by `owner` until `leaseUntil`. `undefined` when
   * the probe is not due, held by another relay, or the circuit closed.
   */
  takeProbe(url: string, owner: string, now: number, leaseUntil: number): Promise<Circuit | undefined>

  /** The probe failed: open again, one more failed probe, the next at `nextProbeAt`. Only by its holder. */
  failProbe(url: string, owner: string, nextProbeAt: number, error: string, now: number): Promise<Circuit | undefined>

  /** Gives the probe back unsent (nothing was waiting to go there): open, the next at `nextProbeAt`. */
  returnProbe(url: string, owner: string, nextProbeAt: number, now: number): Promise<Circuit | undefined>

  /** Extends `owner`'s hold on the probes of `urls` (a probe still in flight). */
  renewProbes(owner: string, urls: readonly string[], leaseUntil: number): Promise<void>

  /**
   * Claims, for a probe, the pending delivery of `routes` due first, whether due yet or not (a
   * parked one), unless another relay holds it; leased to `owner` for `leaseMs`. As
   * {@link Store.claim}: judged and leased by the store's clock (on PostgreSQL, the database's).
   */
  claimProbe(routes: readonly DeliveryRoute[], owner: string, leaseMs: number): Promise<DueDelivery | undefined>

  /**
   * Parks deliveries leased to `owner` without an attempt, provided that no circuit of `urls` is
   * closed (checked in the same statement: one closed meanwhile has woken its deliveries, and these
   * must not miss it). A parked delivery's retry window starts now if it had not, it shows `error`
   * in the delivery log, is due again at `until` or at its window's end, whichever is sooner, and
   * its lease ends. Returns the ids parked; the others are still leased to `owner`.
   *
   * When every circuit of `urls` is paused, the window is not cut short: the delivery is due again
   * at `until`, and the time it waits paused is not counted against its window (the next claim
   * moves the window's start on by that time), so a pause costs a delivery none of its window.
   */
  park(request: ParkRequest): Promise<number[]>

  /**
   * Pauses the URL (an operator's word): its circuit becomes `paused` whatever it was, keeping its
   * failures and last error, and a probe held is void. While paused, no request and no probe goes
   * there, by any relay (the breaker treats it as open, without probing), and its deliveries are
   * parked without their retry window running ({@link park}); an answer to a request already in
   * flight does not end the pause. Pausing a paused URL changes nothing. Returns the circuit.
   */
  pause(url: string, now: number): Promise<Circuit>

  /**
   * Ends the URL's pause: its circuit closes (failures forgotten: the next failures open it again
   * as usual) and, in the same transaction, every pending delivery of `routes` due after `now` is
   * due at `now`. `wasPaused` is false (and nothing changes) when it was not paused.
   */
  resume(url: string, routes: readonly DeliveryRoute[], now: number): Promise<{ wasPaused: boolean; woken: number }>
}

/**
 * What {@link CircuitStore.succeed} did: whether the circuit was open (and how many deliveries it
 * woke), or that the URL is paused (nothing changed: the breaker keeps holding it back).
 */
export interface SucceedResult {
  wasOpen: boolean
  woken: number
  paused?: boolean
}

/** A `circuits` row as both stores read it (times as epoch ms). */
export interface CircuitRow {
  url: string
  state: CircuitState
  failures: number
  probes: number
  opened_at: number | null
  next_probe_at: number | null
  probe_owner: string | null
  probe_lease_until: number | null
  last_error: string | null
  paused_at: number | null
}

/** A `circuits` row as a {@link Circuit} (one shape for both stores). */
export function toCircuit(row: CircuitRow): Circuit {
  return {
    url: row.url,
    state: row.state,
    failures: Number(row.failures),
    probes: Number(row.probes),
    openedAt: optionalNumber(row.opened_at),
    nextProbeAt: optionalNumber(row.next_probe_at),
    probeOwner: row.probe_owner ?? undefined,
    probeLeaseUntil: optionalNumber(row.probe_lease_until),
    lastError: row.last_error ?? undefined,
    pausedAt: optionalNumber(row.paused_at),
  }
}

function optionalNumber(value: number | null): number | undefined {
  return value === null ? undefined : Number(value)
}
