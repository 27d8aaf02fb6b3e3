import { randomBytes } from 'node:crypto'
import { log, plural } from '../log'
import type { Store } from '../store/store'

/**
 * A new relay's id, which it writes with every lease it takes (each claim writes it into the
 * row): 72 random bits in 12 characters, as unlikely to repeat among a database's relays as a
 * UUID, and 24 bytes less WAL than one per claim on PostgreSQL.
 */
export function newLeaseOwner(): string {
  return randomBytes(9).toString('base64url')
}

/** What {@link Leases} needs: the store, whose leases these are, and how long one holds. */
export interface LeasesOptions {
  store: Pick<Store, 'renew' | 'release'>
  /** This relay's id, written with its leases. */
  owner: string
  /** How long a lease holds before another relay may take the work, ms. */
  leaseTimeout: number
  now: () => number
  /** Extends other holds that last as long as a delivery's (the breaker's probes) to `leaseUntil`. */
  renewAlso?: (leaseUntil: number) => Promise<void>
}

/**
 * The deliveries leased to this relay and not yet settled in the store (waiting for a slot, in
 * flight, or their outcome not yet written), their leases renewed every third of `leaseTimeout`
 * while any is held — so an attempt may outlast the lease timeout, and if the process dies its
 * leases run out and another relay (or this one, restarted) delivers the work. Like BullMQ's
 * `LockManager`.
 */
export class Leases {
  readonly #options: LeasesOptions
  /** Ids leased to this relay and not yet settled. */
  readonly #held = new Set<number>()
  /** The timer of the next renewal, while anything is held. */
  #timer: NodeJS.Timeout | undefined
  /** Renewals end: what is still held runs out by itself. */
  #stopped = false

  constructor(options: LeasesOptions) {
    this.#options = options
  }

  /** How many deliveries this relay holds. */
  get size(): number {
    return this.#held.size
  }

  /** These deliveries were just leased to this relay (claimed): hold them, renewing their leases. */
  hold(ids: Iterable<number>): void {
    for (const id of ids) this.#held.add(id)
    this.#arm()
  }

  /** These deliveries are settled in the store (recorded, or parked): no longer held or renewed. */
  settled(ids: Iterable<number>): void {
    for (const id of ids) this.#held.delete(id)
  }

  /**
   * Gives these leases back (deliveries claimed but never started): due at once for any relay. A
   * failure only leaves them leased until their lease runs out.
   */
  async release(ids: readonly number[]): Promise<void> {
    this.settled(ids)
    if (ids.length === 0) return
    try {
      await this.#options.store.release(this.#options.owner, ids)
    } catch (error) {
      log.warn(`could not release ${plural(ids.length, 'lease')}: ${(error as Error).message}`, {
        event: 'release-failed',
      })
    }
  }

  /** No more renewals: the leases still held run out by themselves. */
  stop(): void {
    this.#stopped = true
    clearTimeout(this.#timer)
  }

  #arm(): void {
    if (this.#timer !== undefined || this.#held.size === 0 || this.#stopped) return
    const { leaseTimeout } = this.#options
    this.#timer = setTimeout(() => this.#renew(), Math.max(1, Math.floor(leaseTimeout / 3)))
    // A renewal never keeps the process up by itself.
    this.#timer.unref()
  }

  #renew(): void {
    this.#timer = undefined
    if (this.#stopped || this.#held.size === 0) return
    const { store, owner, leaseTimeout, now, renewAlso } = this.#options
    // A probe in flight is held as long as its delivery (a failure here only lets another relay
    // probe sooner). The circuits still take an end on this relay's clock.
    renewAlso?.(now() + leaseTimeout).catch((error: unknown) => {
      log.error(`could not renew the probes held: ${(error as Error).message}`, { event: 'renew-failed' })
    })
    // A length, not an end: the store judges leases by its own clock (on PostgreSQL, the database's).
    store.renew(owner, [...this.#held], leaseTimeout).then(
      () => this.#arm(),
      (error: unknown) => {
        log.error(`could not renew ${plural(this.#held.size, 'lease')}: ${(error as Error).message}`, {
          event: 'renew-failed',
        })
        this.#arm()
      },
    )
  }
}
