import { redactUrl } from '../../shared/redact-url'
import { log } from '../log'
import type { Circuit, CircuitStore, DeliveryRoute } from '../store/circuits'
import { type BreakerPolicy, nextProbeAt, probeDelay } from './breaker-policy'
import type { DeliveryAttempt } from '../../webhooks/index'
import { describeRequest } from '../destinations/failure-text'
import { clampTimerDelay } from '../../shared/retry'

/** What the prober needs from the breaker and the worker. */
export interface ProberHost {
  circuits: CircuitStore
  policy: BreakerPolicy
  random: () => number
  owner: string
  now: () => number
  /** How long a hold on a probe lasts before another relay may probe, ms. */
  leaseTimeout: number
  routes: ReadonlyMap<string, readonly DeliveryRoute[]>
  /** The circuit as this relay last saw it. */
  circuit(url: string): Circuit | undefined
  /** The circuit as the store now has it. */
  adopt(circuit: Circuit): void
  /** The probe was answered `status`: the circuit closed and `woken` deliveries are due now. */
  closed(url: string, woken: number, status: number | undefined): void
  /** Reads these circuits from the store again. */
  refresh(urls: readonly string[]): Promise<void>
  /** This relay holds the URL's probe: start one delivery there. Resolves false when none waits. */
  probe(url: string): Promise<boolean>
  /** A store operation ended: the worker may have become idle. */
  settled(): void
}

/**
 * The probes of one relay's open circuits: when a probe falls due, takes it in the store (one
 * relay wins it), has the worker send one delivery there, and records how it went.
 */
export class Prober {
  readonly #host: ProberHost
  /** URLs whose probe this relay is taking or holds. */
  readonly #probing = new Set<string>()
  /** URLs whose probe this relay holds (taken in the store), to renew. */
  readonly #held = new Set<string>()
  readonly #timers = new Map<string, NodeJS.Timeout>()
  /** Store operations under way. */
  #busy = 0
  #stopped = false

  constructor(host: ProberHost) {
    this.#host = host
  }

  get busy(): boolean {
    return this.#busy > 0
  }

  /** Sleeps until the circuit's probe is due (or another relay's hold on it runs out), not before `notBefore`. */
  arm(circuit: Circuit, notBefore = 0): void {
    const { url } = circuit
    this.disarm(url)
    // A paused URL is never probed: only an operator's resume ends the pause.
    if (this.#stopped || this.#probing.has(url) || circuit.state === 'closed' || circuit.state === 'paused') return
    const heldElsewhere = circuit.probeOwner !== undefined && circuit.probeOwner !== this.#host.owner
    const at = Math.max(notBefore, circuit.nextProbeAt ?? 0, heldElsewhere ? (circuit.probeLeaseUntil ?? 0) : 0)
    const timer = setTimeout(
      () => {
        this.#timers.delete(url)
        void this.#probe(url)
      },
      clampTimerDelay(at - this.#host.now()),
    )
    timer.unref()
    this.#timers.set(url, timer)
  }

  disarm(url: string): void {
    clearTimeout(this.#timers.get(url))
    this.#timers.delete(url)
  }

  /**
   * The probe's request settled: an answer closes the circuit and wakes its deliveries; a failure
   * opens it again with a longer wait (never shorter than a `Retry-After`); no verdict (no request
   * was made, or the SSRF guard refused it) gives the probe back.
   */
  async settle(url: string, verdict: 'up' | 'down' | undefined, request: DeliveryAttempt | undefined) {
    const { circuits, owner } = this.#host
    this.#busy++
    this.#probing.delete(url)
    try {
      const now = this.#host.now()
      if (verdict === 'up') {
        const { woken, paused } = await circuits.succeed(url, this.#host.routes.get(url) ?? [], now)
        this.#held.delete(url)
        // Paused while the probe was in flight: the pause stands.
        if (paused) await this.#host.refresh([url])
        else this.#host.closed(url, woken, request?.status)
        return
      }
      const failedProbes = (this.#host.circuit(url)?.probes ?? 0) + (verdict === 'down' ? 1 : 0)
      const next = nextProbeAt(now, failedProbes, this.#host.policy, this.#host.random, request?.retryAfterMs)
      const circuit =
        verdict === 'down'
          ? await circuits.failProbe(url, owner, next, describeRequest(request!), now)
          : await circuits.returnProbe(url, owner, next, now)
      this.#held.delete(url)
      if (verdict === 'down') {
        log.warn(`probe of ${redactUrl(url)} failed (${describeRequest(request!)})`, {
          event: 'probe-failed',
          url,
          status: request!.status,
        })
      }
      if (circuit === undefined) await this.#host.refresh([url])
      else this.#host.adopt(circuit)
    } catch (error) {
      log.error(`could not record the probe of ${redactUrl(url)}: ${(error as Error).message}`, {
        event: 'probe-record-failed',
        url,
      })
      this.#held.delete(url)
      this.#retryLater(url)
    } finally {
      this.#busy--
      this.#host.settled()
    }
  }

  /** Extends this relay's hold on the probes in flight. */
  async renew(leaseUntil: number): Promise<void> {
    if (this.#held.size === 0) return
    await this.#host.circuits.renewProbes(this.#host.owner, [...this.#held], leaseUntil)
  }

  /** Stops its timers. Probes it holds run out by themselves. */
  stop(): void {
    this.#stopped = true
    for (const timer of this.#timers.values()) clearTimeout(timer)
    this.#timers.clear()
  }

  // The probe is due: take it (only one relay does), and have the worker send one delivery there.
  async #probe(url: string): Promise<void> {
    if (this.#stopped || this.#probing.has(url)) return
    const { circuits, owner } = this.#host
    this.#probing.add(url)
    this.#busy++
    let sent = false
    try {
      const now = this.#host.now()
      const taken = await circuits.takeProbe(url, owner, now, now + this.#host.leaseTimeout)
      if (taken === undefined) {
        // Not due after all, held by another relay, or closed: see how it stands.
        this.#probing.delete(url)
        await this.#host.refresh([url])
        return
      }
      this.#held.add(url)
      this.#host.adopt(taken)
      sent = !this.#stopped && (await this.#host.probe(url))
      if (!sent) {
        // Nothing waits to go there: the circuit stays open and looks again after the same interval.
        const next = this.#host.now() + probeDelay(taken.probes, this.#host.policy, this.#host.random)
        const circuit = await circuits.returnProbe(url, owner, next, this.#host.now())
        this.#held.delete(url)
        this.#probing.delete(url)
        if (circuit !== undefined) this.#host.adopt(circuit)
      }
    } catch (error) {
      log.error(`could not probe ${redactUrl(url)}: ${(error as Error).message}`, { event: 'probe-failed', url })
      if (!sent) {
        this.#probing.delete(url)
        this.#retryLater(url)
      }
    } finally {
      this.#busy--
      this.#host.settled()
    }
  }

  // After a store error: try again once a hold (if one was taken) has run out, never in a hot loop.
  #retryLater(url: string): void {
    const circuit = this.#host.circuit(url)
    if (circuit !== undefined) this.arm(circuit, this.#host.now() + this.#host.leaseTimeout)
  }
}
