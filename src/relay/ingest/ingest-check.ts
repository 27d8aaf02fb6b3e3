import type { RoutedSource } from '../config/sources'
import type { NewViolation } from '../store/violations'

/**
 * What a check found in an accepted message (tracking plans: docs/plans.md). The message
 * is acknowledged whatever was found.
 */
export interface CheckFindings {
  /** What the message broke, committed with the request's deliveries. */
  violations: readonly NewViolation[]
  /** The message to store instead of the one checked (a copy without the offending fields). */
  message?: Record<string, unknown>
  /** Why no delivery is written for it (it counts as `filtered`); absent: it goes on. */
  blocked?: string
  /**
   * The destinations it is withheld from, each with why (its `filtered` reason): no delivery is
   * written for them; the others it goes to as usual.
   */
  withheld?: ReadonlyMap<string, string>
}

/**
 * What a check answers of a message: `undefined` accepts it as is; a string refuses it (one
 * sentence for the client; refused as `invalid`, on its own, like any invalid message); findings
 * accept it, perhaps changed or blocked, with what was found.
 */
export type IngestVerdict = string | CheckFindings | undefined

/**
 * An optional check each message passes once it is valid (and has its `messageId` and times),
 * before it goes to the outbox (docs/maintainers.md, "Seams"). Without a check, nothing is asked,
 * at no cost. The findings' violations are committed with the request's deliveries (GroupCommit).
 */
export type IngestCheck = (message: Readonly<Record<string, unknown>>, source: RoutedSource) => IngestVerdict
