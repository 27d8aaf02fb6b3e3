import { log, plural } from '../log'
import type { AttemptOutcome, Store } from '../store/store'
import { BatchedWriter } from './batched-writer'

/** An attempt's outcome waiting to be written, with the source whose lane looks for work once it is. */
export interface QueuedOutcome {
  source: string
  outcome: AttemptOutcome
}

/** What the outcome writer tells the worker. */
export interface OutcomeWriterHooks {
  /** These outcomes are in the store; `afterFailures` when earlier writes had failed. */
  written(outcomes: readonly QueuedOutcome[], afterFailures: boolean): void
  /** A write ended: the worker may have become idle. */
  settled(): void
}

/**
 * The attempts' outcomes, written to the store in one transaction per batch. A failed write keeps
 * them (their deliveries stay held, so none is sent again) ahead of those that came since, and the
 * worker starts no attempt until a write succeeds again (`failing`).
 */
export function outcomeWriter(store: Pick<Store, 'record'>, hooks: OutcomeWriterHooks) {
  return new BatchedWriter<number, QueuedOutcome>({
    write: async (batch) => {
      await store.record([...batch.values()].map((queued) => queued.outcome))
      batch.clear()
    },
    failed: (error, left, retryMs) => {
      log.error(
        `could not record ${plural(left.size, 'outcome')}: ${error.message}; attempts paused, writing again in ${retryMs} ms`,
        { event: 'record-failed' },
      )
    },
    wrote: (outcomes, afterFailures) => {
      if (afterFailures) {
        log.info(`recorded ${plural(outcomes.length, 'outcome')} after earlier failures; attempts resume`, {
          event: 'record-recovered',
        })
      }
      hooks.written(outcomes, afterFailures)
    },
    settled: () => hooks.settled(),
  })
}
