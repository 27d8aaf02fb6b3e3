import type { Dispatcher } from 'undici'
import { keyPrefix, openArchiveStore } from './open-store'
import { ArchiveSender, type WrittenFile } from './sender'
import { type ArchiveSettings, archiveSecrets, parseArchiveSettings } from './settings'

/** What the relay gives an archive sender. */
export interface ArchiveContext {
  source: string
  /** Unique per relay process. */
  relayId: string
  /** Sends the S3 requests; undici's global one when absent. */
  agent?: Dispatcher
  /** Told of each file once it is durable (files and bytes metrics, the page's last file). */
  onFile?: (file: WrittenFile) => void
}

/**
 * The `Archive` destination: every message of a source kept in files by day and hour, in a local
 * folder or an S3-compatible bucket (docs/archive.md).
 */
export const Archive = Object.freeze({
  name: 'Archive',
  parseSettings: (raw: unknown, path: string): ArchiveSettings => parseArchiveSettings(raw, path),
  secrets: (settings: ArchiveSettings): string[] => archiveSecrets(settings),
  create(settings: ArchiveSettings, context: ArchiveContext): ArchiveSender {
    const store = openArchiveStore(settings, context.agent === undefined ? {} : { dispatcher: context.agent })
    return new ArchiveSender(settings, {
      source: context.source,
      relayId: context.relayId,
      store,
      prefix: keyPrefix(settings),
      ...(context.onFile === undefined ? {} : { onFile: context.onFile }),
    })
  },
})
