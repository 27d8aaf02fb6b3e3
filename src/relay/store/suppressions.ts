import type { AuditRecord } from './source-configs'

/**
 * One suppressed user (docs/privacy.md, "Suppression"): their messages, of `source` or of every
 * source when it has none, are acknowledged and dropped at ingest.
 */
export interface Suppression {
  userId: string
  /** The one source it applies to; absent: every source. */
  source?: string
  /** When it was made, epoch ms. */
  at: number
}

/** {@link SuppressionStore.add}'s request. */
export interface AddSuppressions {
  userIds: readonly string[]
  /** The one source they apply to; `undefined`: every source. */
  source: string | undefined
  /** When, epoch ms. */
  at: number
  /** The audit entry of each user id newly suppressed (one already suppressed there has none). */
  audit: (userId: string) => AuditRecord
}

/** {@link SuppressionStore.remove}'s request. */
export interface RemoveSuppression {
  userId: string
  /** Lift only the suppression of this source; `undefined`: every suppression of the user. */
  source: string | undefined
  /** The audit entry of each suppression lifted (`source` is the one it applied to, if any). */
  audit: (source: string | undefined) => AuditRecord
}

/** What a write changed, and the suppressions' version after it (unchanged when nothing was). */
export interface SuppressionChange {
  changed: number
  version: number
}

/**
 * The suppressed users, shared by every relay on the store. Each write is one transaction that
 * also appends its audit entries and bumps the version the relays poll; a failed write changes
 * nothing.
 */
export interface SuppressionStore {
  /** Bumped by every write that changed something: one cheap read, for polling. */
  version(): Promise<number>
  /** Every suppression, oldest first. */
  list(): Promise<Suppression[]>
  /** Suppresses each of `userIds` (those already suppressed there stay as they were). */
  add(request: AddSuppressions): Promise<SuppressionChange>
  /** Lifts a user's suppression (or all of them). */
  remove(request: RemoveSuppression): Promise<SuppressionChange>
}

/** How a suppression of every source is stored: the source column is never empty otherwise. */
export const EVERY_SOURCE = ''
