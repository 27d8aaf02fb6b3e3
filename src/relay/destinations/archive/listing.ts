import { decodeFile } from './codec'
import { dateFolder, datesOf, hourInWindow, parseKey, sourceFolder } from './layout'
import type { ArchiveStore, FileMeta } from './store'

/** One file of a listing: `first`/`last` the earliest and latest `receivedAt` in it, ISO 8601. */
export interface ListedFile extends FileMeta {
  key: string
  bytes: number
}

/** What to list: a source's files whose messages were received in `[since, until]`. */
export interface ArchiveWindow {
  source: string
  /** Epoch milliseconds, inclusive. */
  since: number
  until: number
}

// HEADs (or meta files) read at once while listing.
const CONCURRENCY = 16

/**
 * The files of a source whose messages were received in the window, oldest first. Only the
 * window's days are listed and only its hours kept, whatever the archive's age.
 */
export async function listArchive(
  store: ArchiveStore,
  prefix: string,
  { source, since, until }: ArchiveWindow,
): Promise<{ files: ListedFile[] }> {
  const found = []
  // From the source's earliest day, not the window's start: a window may reach back years.
  const earliest = await store.earliestDate(sourceFolder(prefix, source))
  const start = earliest === undefined ? until + 1 : Math.max(since, Date.parse(`${earliest}T00:00:00.000Z`))
  // Nothing is received in the future: a window open to the far future ends today.
  for (const date of datesOf(start, Math.min(until, Date.now() + 86_400_000))) {
    for (const file of await store.list(dateFolder(prefix, source, date))) {
      const parts = parseKey(file.key)
      if (parts && parts.source === source && hourInWindow(parts, since, until)) found.push(file)
    }
  }
  const files: ListedFile[] = []
  for (let start = 0; start < found.length; start += CONCURRENCY) {
    const chunk = found.slice(start, start + CONCURRENCY)
    const metas = await Promise.all(chunk.map((file) => store.meta(file.key).then((m) => m ?? count(store, file.key))))
    chunk.forEach((file, index) => {
      const meta = metas[index]!
      if (Date.parse(meta.first) <= until && Date.parse(meta.last) >= since) files.push({ ...file, ...meta })
    })
  }
  return { files: files.sort((a, b) => a.first.localeCompare(b.first) || a.key.localeCompare(b.key)) }
}

/** A file's meta read from the file itself, for one written without it. */
async function count(store: ArchiveStore, key: string): Promise<FileMeta> {
  let messages = 0
  let first = Number.POSITIVE_INFINITY
  let last = Number.NEGATIVE_INFINITY
  for await (const record of decodeFile(parseKey(key)!.format, await store.read(key))) {
    const at = Date.parse(record.receivedAt)
    messages++
    first = Math.min(first, at)
    last = Math.max(last, at)
  }
  const iso = (ms: number) => (Number.isFinite(ms) ? new Date(ms).toISOString() : '')
  return { messages, first: iso(first), last: iso(last) }
}
