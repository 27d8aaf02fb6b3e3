import { decodeFile } from './codec'
import { parseKey } from './layout'
import { type ArchiveWindow, listArchive } from './listing'
import type { ArchiveRecord } from './record'
import type { ArchiveStore } from './store'

/**
 * Every message of a source received in the window, file by file, oldest file first: what a replay
 * from the archive sends. One file is in memory at a time. A message archived twice (a relay killed
 * after writing its file, before recording it) is in the same hour's folder both times, since the
 * folder is its hour of receipt: each hour's messages are deduplicated on `messageId`.
 */
export async function* readArchive(
  store: ArchiveStore,
  prefix: string,
  window: ArchiveWindow,
): AsyncGenerator<ArchiveRecord> {
  const { files } = await listArchive(store, prefix, window)
  // The listing is ordered by each file's first receipt, so an hour's files come together: only
  // the current hour's ids are kept.
  let hour = ''
  let ids = new Set<string>()
  for (const file of files) {
    const parts = parseKey(file.key)!
    if (`${parts.date}T${parts.hour}` !== hour) {
      hour = `${parts.date}T${parts.hour}`
      ids = new Set()
    }
    for await (const record of decodeFile(parts.format, await store.read(file.key))) {
      const at = Date.parse(record.receivedAt)
      if (at < window.since || at > window.until || ids.has(record.messageId)) continue
      ids.add(record.messageId)
      yield record
    }
  }
}
