import { clampTimerDelay } from '../../shared/retry'
import { log } from '../log'
import type { Lane } from './lane'
import type { Leases } from './leases'
import type { WorkerStore } from './worker-options'

// Due deliveries are claimed at least this many at a time: one round trip feeds many attempts.
const CLAIM_CHUNK = 128

/** What a claim needs of its worker. */
export interface ClaimHost {
  store: WorkerStore
  /** This relay's id, written with its leases. */
  owner: string
  leaseTimeout: number
  leases: Leases
  /** Deliveries in flight at once, per source. */
  concurrency: number
  stopping(): boolean
  /** Reads the circuits again before the claimed deliveries are planned. */
  freshen(): Promise<void>
}

/**
 * Claims a chunk of `lane`'s due deliveries into its buffer, leased to this relay, and says how the
 * lane sleeps after: until its next delivery is due, or, after a failed claim, a back-off.
 * `undefined`: no sleep (more may be due now: asked for with `lane.claimAgain()`, or none at all).
 */
export async function claimDue(
  lane: Lane,
  host: ClaimHost,
  pump: () => void,
): Promise<Parameters<Lane['endClaim']>[0]> {
  const wanted = Math.max(CLAIM_CHUNK, 2 * host.concurrency) - lane.buffer.length
  try {
    const due = await host.store.claim({
      source: lane.source,
      limit: wanted,
      owner: host.owner,
      // A length, not an end: the store judges leases by its own clock (on PostgreSQL, the
      // database's), so this relay's clock being off never takes or keeps work it should not.
      leaseMs: host.leaseTimeout,
    })
    lane.claimSucceeded()
    if (host.stopping()) {
      await host.leases.release(due.map((d) => d.id))
      return undefined
    }
    host.leases.hold(due.map((d) => d.id))
    lane.buffer.push(...due)
    if (due.length > 0) await host.freshen()
    if (due.length === wanted) {
      lane.claimAgain()
      return undefined
    }
    // Counts what became due since the claim too (then 0 or less: claimed again at once), so
    // nothing is missed between the two statements, which read the clock at two instants.
    const wait = await host.store.nextDueIn(lane.source)
    // A timer may fire a millisecond early: the pump then finds nothing due and sleeps again.
    if (wait === undefined || host.stopping()) return undefined
    return { ms: clampTimerDelay(wait), why: 'next-due', pump }
  } catch (error) {
    const ms = lane.claimFailed()
    log.error(
      `could not claim deliveries of source ${lane.source}: ${(error as Error).message}; claiming again in ${ms} ms`,
      { event: 'claim-failed', source: lane.source },
    )
    return host.stopping() ? undefined : { ms, why: 'backing-off', pump }
  }
}
