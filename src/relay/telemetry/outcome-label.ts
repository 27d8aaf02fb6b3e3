import type { SettledAttempt } from '../events/kinds'
import type { AttemptOutcomeLabel } from './attempt-tally'

/** An attempt's `outcome` label: what became of its delivery (the same words in every series). */
export function outcomeLabel(attempt: SettledAttempt): AttemptOutcomeLabel {
  switch (attempt.outcome.next.status) {
    case 'delivered':
      return 'delivered'
    case 'pending':
      return 'retried'
    case 'failed':
      return 'dead_lettered'
    case 'filtered':
      return 'filtered'
  }
}
