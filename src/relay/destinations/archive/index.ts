import type { DestinationModule, DestinationSender, MessageOutcome, OutboundMessage } from '../destination'
import { Archive } from './module'
import type { ArchiveSettings } from './settings'
import type { MessageOutcome as ArchiveOutcome } from './types'

/**
 * The `Archive` destination as the relay lists it (docs/archive.md): the archive's own sender,
 * its outcomes as the relay's (each with the one request its target saw, for the breaker).
 */
export const archive: DestinationModule<ArchiveSettings> = {
  name: Archive.name,
  parseSettings: (raw, path) => Archive.parseSettings(raw, path),
  secrets: (settings) => Archive.secrets(settings),
  create(settings, context): DestinationSender {
    // The bucket's endpoint is the operator's own setting, not a receiver's URL: S3 requests go
    // through undici's global dispatcher, not the SSRF guard (a MinIO on the private network).
    const sender = Archive.create(settings, { source: context.source, relayId: context.relayId })
    const target = sender.targets[0]!
    return {
      targets: sender.targets,
      batching: sender.batching,
      retries: sender.retries,
      async sendBatch(batch: readonly OutboundMessage[]): Promise<readonly MessageOutcome[]> {
        const started = performance.now()
        const outcomes = await sender.sendBatch(batch.map((one) => ({ ...one, receivedAt: receivedAtOf(one) })))
        const ms = Math.round(performance.now() - started)
        return outcomes.map((outcome) => asRelayOutcome(outcome, target, ms))
      },
      close: () => sender.close(),
    }
  },
}

/** When the relay received a message: ingest stamps every stored message with it. */
function receivedAtOf(one: OutboundMessage): string {
  const own = (one as { receivedAt?: unknown }).receivedAt ?? (one.message as { receivedAt?: unknown }).receivedAt
  return typeof own === 'string' ? own : ''
}

function asRelayOutcome(outcome: ArchiveOutcome, url: string, ms: number): MessageOutcome {
  if (outcome.kind === 'delivered') {
    return {
      kind: 'delivered',
      requests: [{ url, status: 200, ms }],
      ...(outcome.detail ? { detail: outcome.detail } : {}),
    }
  }
  return {
    kind: 'failed',
    retryable: outcome.retryable,
    error: outcome.error,
    requests: [{ url, error: outcome.error, ms }],
  }
}
