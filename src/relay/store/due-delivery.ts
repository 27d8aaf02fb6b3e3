import type { DeliverableMessage } from '../../shared/message'

/** A due delivery, as the worker attempts it. */
export interface DueDelivery {
  id: number
  source: string
  destination: string
  message: DeliverableMessage
  /** Attempts made so far in the current retry window. */
  attempts: number
  /** When the window's first attempt started (epoch ms, on the caller's clock), if there was one. */
  firstAttemptAt: number | undefined
}
