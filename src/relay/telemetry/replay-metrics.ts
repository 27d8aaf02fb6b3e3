import type { Counter, Registry } from 'prom-client'
import type { SettledAttempt } from '../events/kinds'
import { log } from '../log'
import { outcomeLabel } from './outcome-label'
import { promClient } from './prom-client'

/**
 * Replays' copies (docs/replay.md), registered in a relay's own registry by `RelayMetrics`:
 * counted apart from live delivery's attempts, rates and charts, which are live traffic's.
 */
export class ReplayMetrics {
  readonly #copies: Counter<'source' | 'outcome'>

  constructor(registers: Registry[]) {
    this.#copies = new (promClient().Counter)({
      name: 'tracklet_replay_copies_total',
      help: "Attempts of replays' copies (docs/replay.md), by source and outcome (delivered, retried, dead_lettered, filtered).",
      labelNames: ['source', 'outcome'],
      registers,
    })
  }

  /** An attempt of a replay's copy settled. Never throws. */
  copySettled(attempt: SettledAttempt): void {
    try {
      this.#copies.inc({ source: attempt.source, outcome: outcomeLabel(attempt) })
    } catch (error) {
      log.error(`metrics: could not count a replay copy: ${(error as Error).message}`, { event: 'internal-error' })
    }
  }
}
