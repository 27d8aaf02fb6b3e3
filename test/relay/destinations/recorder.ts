import type { DestinationModule, MessageOutcome, OutboundMessage } from '../../../src/relay/destinations/destination'
import { WEBHOOK_RETRIES } from '../../../src/relay/destinations/webhooks/index'
import { RelayConfigError } from '../../../src/relay/errors'

/** The settings of the tests' second destination. */
export interface RecorderSettings {
  /** Messages per batch, at most. */
  maxMessages: number
  /** How long a batch waits for more, ms. */
  maxWaitMs: number
}

/** What every recorder sender got, batch by batch, and how it answers the next ones. */
export const recorded = {
  batches: [] as OutboundMessage[][],
  /** Answers a batch's messages; delivered unless set. */
  answer: (_batch: readonly OutboundMessage[]): MessageOutcome[] | undefined => undefined,
  reset(): void {
    this.batches = []
    this.answer = () => undefined
  },
}

/**
 * A destination of the tests only, beside Webhooks: it records each batch it is sent, in memory,
 * and gathers messages as its settings say. Its problems are named with their paths, all at once.
 */
export const recorder: DestinationModule<RecorderSettings> = {
  name: 'Recorder',
  parseSettings(raw, path) {
    const value = raw as Record<string, unknown>
    const problems = (['maxMessages', 'maxWaitMs'] as const)
      .filter((key) => typeof value[key] !== 'number' || (value[key] as number) < (key === 'maxMessages' ? 1 : 0))
      .map((key) => ({ field: `${path}.${key}`, message: 'must be a number' }))
    if (problems.length > 0) throw new RelayConfigError(problems[0]!.field, problems[0]!.message, { problems })
    return { maxMessages: value['maxMessages'] as number, maxWaitMs: value['maxWaitMs'] as number }
  },
  secrets: () => [],
  create(settings, context) {
    return {
      targets: [`memory://recorder/${context.source}`],
      batching: { maxMessages: settings.maxMessages, maxWaitMs: settings.maxWaitMs },
      retries: WEBHOOK_RETRIES,
      sendBatch: async (batch) => {
        recorded.batches.push([...batch])
        return recorded.answer(batch) ?? batch.map(() => ({ kind: 'delivered' as const }))
      },
      close: async () => {},
    }
  },
}
