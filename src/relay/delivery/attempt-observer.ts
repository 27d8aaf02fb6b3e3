import type { SettledAttempt } from '../events/kinds'
import { log } from '../log'
import type { AttemptOutcome, DueDelivery } from '../store/store'

/**
 * Tells `observe` (the live stream, the metrics) of a settled attempt. An observer that throws is
 * logged: it never becomes the attempt's failure, nor stops its outcome from being written.
 */
export function tellObserver(
  observe: ((attempt: SettledAttempt) => void) | undefined,
  delivery: DueDelivery,
  outcome: AttemptOutcome,
  ms: number,
): void {
  try {
    observe?.({
      source: delivery.source,
      destination: delivery.destination,
      messageId: delivery.message.messageId,
      outcome,
      ms,
      // A replay's copy (docs/replay.md) says which replay made it.
      ...('replayId' in delivery && typeof delivery.replayId === 'number' ? { replayId: delivery.replayId } : {}),
    })
  } catch (error) {
    log.error(`an observer of attempts threw: ${(error as Error).message}`, { event: 'internal-error' })
  }
}
