import type { PostgresPool } from '../../kit/postgres/pool'
import { orderAheadOf, orderLinesMirror, orderWaitingIn } from '../ordering/order-hold'
import type { OrderingStore, OrderWaitingRow } from '../ordering/ordering-store'

// The queue holds every pending delivery (settled ones leave it): the rule's table.
const AHEAD = orderAheadOf('queue', '$1::bigint')
const WAITING = orderWaitingIn('queue')
const MIRROR = orderLinesMirror('queue')

/** {@link OrderingStore} on PostgreSQL: one statement each, on the queue's ordering index. */
export class PostgresOrdering implements OrderingStore {
  /** The store's pool. */
  readonly #pool: PostgresPool

  constructor(pool: PostgresPool) {
    this.#pool = pool
  }

  async aheadOf(id: number): Promise<number | undefined> {
    const { rows } = await this.#pool.query<{ ahead: string }>(AHEAD, [id])
    return rows[0] === undefined ? undefined : Number(rows[0].ahead)
  }

  async waiting(): Promise<OrderWaitingRow[]> {
    type Row = { source: string; destination: string; count: string }
    const { rows } = await this.#pool.query<Row>(WAITING)
    return rows.map(({ source, destination, count }) => ({ source, destination, count: Number(count) }))
  }

  async mirrorHeads(): Promise<number> {
    return (await this.#pool.query(MIRROR)).rowCount ?? 0
  }
}
