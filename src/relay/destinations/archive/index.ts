import type { DestinationModule, DestinationSender, MessageOutcome, OutboundMessage } from '../destination'
import { reportStatus } from '../status-board'
import { Archive } from './module'
import type { ArchiveSettings } from './settings'
import type { MessageOutcome as ArchiveOutcome } from './types'

/**
 * The `Archive` destination as the relay lists it (docs/archive.md): the archive's own sender,
 * its outcomes as the relay's (each with the one request its target saw, for the breaker and the
 * delivery log, which shows the file that holds the message), its series and its page status.
 */
export const archive: DestinationModule<ArchiveSettings> = {
  name: Archive.name,
  parseSettings: (raw, path) => Archive.parseSettings(raw, path),
  secrets: (settings) => Archive.secrets(settings),
  metrics: [
    {
      name: 'tracklet_archive_files_total',
      help: 'Archive files made durable (renamed into place, or their upload completed), by source.',
      count: (detail) => (typeof detail['bytes'] === 'number' ? 1 : 0),
    },
    {
      name: 'tracklet_archive_bytes_total',
      help: 'Bytes of the archive files made durable (compressed, as stored), by source.',
      count: (detail) => (typeof detail['bytes'] === 'number' ? detail['bytes'] : 0),
    },
  ],
  lagMetric: {
    name: 'tracklet_archive_lag_seconds',
    help: 'Seconds since the oldest message not yet in a durable archive file was received, by source (0: none waits).',
  },
  create(settings, context): DestinationSender {
    // The bucket's endpoint is the operator's own setting, not a receiver's URL: S3 requests go
    // through undici's global dispatcher, not the SSRF guard (a MinIO on the private network).
    const sender = Archive.create(settings, {
      source: context.source,
      relayId: context.relayId,
      onFile: (file) => reportStatus(target, { last: { at: Date.now(), text: `file ${file.key}` } }),
    })
    const target = sender.targets[0]!
    return {
      targets: sender.targets,
      batching: sender.batching,
      retries: sender.retries,
      async sendBatch(batch: readonly OutboundMessage[]): Promise<readonly MessageOutcome[]> {
        const started = performance.now()
        const outcomes = await sender.sendBatch(batch.map((one) => ({ ...one, receivedAt: receivedAtOf(one) })))
        const ms = Math.round(performance.now() - started)
        return asRelayOutcomes(outcomes, target, ms)
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

// The messages of one file share one request record (made once a file, not once a message).
function asRelayOutcomes(outcomes: readonly ArchiveOutcome[], url: string, ms: number): MessageOutcome[] {
  const requests = new Map<unknown, MessageOutcome['requests']>()
  return outcomes.map((outcome) => {
    if (outcome.kind === 'failed') {
      return {
        kind: 'failed',
        retryable: outcome.retryable,
        error: outcome.error,
        requests: [{ url, error: outcome.error, ms }],
      }
    }
    const file = outcome.detail?.['file']
    let made = requests.get(file)
    if (made === undefined) {
      made = [{ url, status: 200, ms, ...(typeof file === 'string' ? { responseBody: `file ${file}` } : {}) }]
      requests.set(file, made)
    }
    return { kind: 'delivered', requests: made, ...(outcome.detail ? { detail: outcome.detail } : {}) }
  })
}
