import { log, plural } from '../log'
import { isDataError } from '../store/data-error'
import type { NewDelivery, Store } from '../store/store'
import type { NewViolation, ViolationStore } from '../store/violations'
import { TurnBatch } from './turn-batch'

/** What one request commits: its deliveries and the violations tracking plans found in it. */
interface Commit {
  deliveries: readonly NewDelivery[]
  violations: readonly NewViolation[]
}

/** The outbox as group commit writes to it: `violations` where it keeps them. */
export type CommitStore = Pick<Store, 'enqueue' | 'enqueueWithViolations'> & {
  violations?: Pick<ViolationStore, 'record'>
}

/**
 * Group commit for ingest: the deliveries of every request that reaches the commit in the same
 * turn of the event loop are written in one transaction ({@link TurnBatch}). A 2xx still means
 * "committed": each request's promise resolves only once its transaction is.
 *
 * The violations found in those requests go with them: in the same transaction where the store
 * can (`Store.enqueueWithViolations`), otherwise in one write right after it, in the same group. A
 * failed write of violations loses the record, never the messages: they stay accepted and the log
 * says how many went unrecorded.
 *
 * A group that fails because of its data ({@link isDataError}: one request's message the store
 * cannot hold) is written again one request per transaction, so only the request that carried the
 * data is refused; any other failure (the database is down, the disk full) refuses the whole
 * group at once.
 */
export class GroupCommit extends TurnBatch<Commit> {
  constructor(store: CommitStore) {
    super({ write: (commits) => write(store, commits), writeEachOn: isDataError })
  }

  /**
   * Resolves once `deliveries` (and the `violations` found in their messages) are committed;
   * rejects if the transaction holding the deliveries failed.
   */
  commit(deliveries: readonly NewDelivery[], violations: readonly NewViolation[] = []): Promise<void> {
    if (deliveries.length === 0 && violations.length === 0) return Promise.resolve()
    return this.add([{ deliveries, violations }])
  }
}

async function write(store: CommitStore, commits: readonly Commit[]): Promise<void> {
  const deliveries = commits.length === 1 ? commits[0]!.deliveries : commits.flatMap((c) => c.deliveries)
  const violations = commits.length === 1 ? commits[0]!.violations : commits.flatMap((c) => c.violations)
  if (violations.length === 0) {
    await store.enqueue(deliveries)
    return
  }
  const unrecorded = (error: Error) => logUnrecorded(violations.length, error)
  if (store.enqueueWithViolations !== undefined) {
    await store.enqueueWithViolations(deliveries, violations, unrecorded)
    return
  }
  if (deliveries.length > 0) await store.enqueue(deliveries)
  try {
    if (store.violations === undefined) throw new Error('the store keeps no violations')
    await store.violations.record(violations)
  } catch (error) {
    unrecorded(error as Error)
  }
}

// The messages are committed: sending them again would not bring the record back.
function logUnrecorded(count: number, error: Error): void {
  log.error(`could not record ${plural(count, 'tracking plan violation')}: ${error.message}`, {
    event: 'violations-unrecorded',
    count,
  })
}
