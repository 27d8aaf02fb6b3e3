import { orderAheadOf, orderLinesMirror, orderWaitingIn } from '../ordering/order-hold'
import type { OrderingStore, OrderWaitingRow } from '../ordering/ordering-store'
import type { StatementCache } from './statement-cache'

const AHEAD = orderAheadOf('deliveries', '?')
const WAITING = orderWaitingIn('deliveries')
const MIRROR = orderLinesMirror('deliveries')

/** {@link OrderingStore} on SQLite: one statement each, on the deliveries' ordering index. */
export class SqliteOrdering implements OrderingStore {
  /** The store's prepared statements. */
  readonly #sql: StatementCache

  constructor(sql: StatementCache) {
    this.#sql = sql
  }

  async aheadOf(id: number): Promise<number | undefined> {
    const ahead = this.#sql.get(AHEAD).pluck().get(id) as number | undefined
    return ahead ?? undefined
  }

  async waiting(): Promise<OrderWaitingRow[]> {
    return this.#sql.get(WAITING).all() as OrderWaitingRow[]
  }

  async mirrorHeads(): Promise<number> {
    return this.#sql.get(MIRROR).run().changes
  }
}
