/** Per route, the deliveries waiting behind an earlier one of their user. */
export interface OrderWaitingRow {
  source: string
  destination: string
  count: number
}

/**
 * What the store tells of ordered delivery (docs/delivery-controls.md, "Ordering"); the rule itself
 * is in its claims.
 */
export interface OrderingStore {
  /**
   * The id of the earliest pending delivery of the same user and destination that `id` waits
   * behind, or `undefined` when `id` is not held (not ordered, not pending, or first in line).
   */
  aheadOf(id: number): Promise<number | undefined>
  /** Per route, how many pending deliveries wait behind an earlier one of their user. */
  waiting(): Promise<OrderWaitingRow[]>
  /**
   * Puts each held delivery's due time at its line's head's, so that claims pass over the lines
   * whose head waits for a retry (`orderLinesMirror`); resolves with how many moved.
   */
  mirrorHeads(): Promise<number>
}
