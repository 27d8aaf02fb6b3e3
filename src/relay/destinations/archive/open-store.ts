import type { Dispatcher } from 'undici'
import { FileStore } from './file-store'
import { S3Store } from './s3-store'
import type { ArchiveSettings } from './settings'
import type { ArchiveStore } from './store'

/** The store of an archive's settings: its folder, or its bucket. */
export function openArchiveStore(settings: ArchiveSettings, options: { dispatcher?: Dispatcher } = {}): ArchiveStore {
  const { location } = settings
  return location.kind === 'file' ? new FileStore(location.root) : new S3Store(location, options)
}

/** The prefix keys start with: the bucket's prefix, or none in a folder (the folder is the root). */
export function keyPrefix(settings: ArchiveSettings): string {
  return settings.location.kind === 's3' ? settings.location.prefix : ''
}
