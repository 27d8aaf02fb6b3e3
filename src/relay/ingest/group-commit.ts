import { isDataError } from '../store/data-error'
import type { NewDelivery, Store } from '../store/store'
import { TurnBatch } from './turn-batch'

/**
 * Group commit for ingest: the deliveries of every request that reaches the commit in the same
 * turn of the event loop are written in one transaction ({@link TurnBatch}). A 2xx still means
 * "committed": each request's promise resolves only once its transaction is.
 *
 * A group that fails because of its data ({@link isDataError}: one request's message the store
 * cannot hold) is written again one request per transaction, so only the request that carried the
 * data is refused; any other failure (the database is down, the disk full) refuses the whole
 * group at once.
 */
export class GroupCommit extends TurnBatch<NewDelivery> {
  constructor(store: Pick<Store, 'enqueue'>) {
    super({ write: (deliveries) => store.enqueue(deliveries).then(() => undefined), writeEachOn: isDataError })
  }

  /** Resolves once `deliveries` are committed; rejects if the transaction holding them failed. */
  commit(deliveries: readonly NewDelivery[]): Promise<void> {
    return this.add(deliveries)
  }
}
