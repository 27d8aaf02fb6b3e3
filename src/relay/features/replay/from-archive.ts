import { withoutConsent } from '../../config/consent-setting'
import { withoutFunction } from '../../config/function-settings'
import type { RelaySource } from '../../config/options'
import { decodeFile } from '../../destinations/archive/codec'
import { parseKey } from '../../destinations/archive/layout'
import { type ListedFile, listArchive } from '../../destinations/archive/listing'
import { Archive } from '../../destinations/archive/module'
import { keyPrefix, openArchiveStore } from '../../destinations/archive/open-store'
import type { ArchiveRecord } from '../../destinations/archive/record'
import type { ArchiveSettings } from '../../destinations/archive/settings'
import type { ArchiveStore } from '../../destinations/archive/store'
import type { ArchiveCopy, QueueStep, ReplayRecord, ReplayStore } from '../../store/replays'
import type { DeliveryFilter } from '../../store/store'

// Replays from the archive (docs/replay.md, "From the archive"): the copies are read from the
// files of the window's sources, days and hours, a step at a time, at the replay's pace. Where a
// replay stands in its files is kept in its row (so any relay carries it on); each relay keeps the
// file it is reading open between steps, so a step reads only its own records.

/** A source's archive, opened: its store and the prefix its keys start with. */
export interface OpenArchive {
  store: ArchiveStore
  prefix: string
}

/** The archives of the sources, opened once each (a source whose settings change is opened again). */
export class SourceArchives {
  readonly #sources: () => readonly RelaySource[]
  readonly #open = new Map<string, { settings: unknown; archive: OpenArchive }>()

  constructor(sources: () => readonly RelaySource[]) {
    this.#sources = sources
  }

  /** The names of the sources that archive now. */
  names(): string[] {
    return this.#sources()
      .filter((s) => s.destinations?.[Archive.name] !== undefined)
      .map((s) => s.name)
  }

  /** The archive of `source`, or `undefined` when it has none. */
  of(source: string): OpenArchive | undefined {
    const raw = this.#sources().find((s) => s.name === source)?.destinations?.[Archive.name]
    if (raw === undefined) return undefined
    const known = this.#open.get(source)
    if (known !== undefined && known.settings === raw) return known.archive
    if (known !== undefined) void known.archive.store.close()
    const settings = withoutFunction(withoutConsent(raw)) as unknown as ArchiveSettings
    const archive = { store: openArchiveStore(settings), prefix: keyPrefix(settings) }
    this.#open.set(source, { settings: raw, archive })
    return archive
  }

  async close(): Promise<void> {
    const open = [...this.#open.values()]
    this.#open.clear()
    await Promise.all(open.map(({ archive }) => archive.store.close()))
  }
}

/** Where a replay from the archive stands: its source (by index), file (by key) and record in it. */
interface Position {
  s: number
  f: string
  r: number
}

/** The sources a replay from the archive reads, in order: its filter's routes. */
export function sourcesOf(filter: DeliveryFilter): string[] {
  return [...new Set((filter.routes ?? []).map((r) => r.source))]
}

/** Whether an archived record matches the filter's fields besides the window and the source. */
export function recordMatches(record: ArchiveRecord, filter: DeliveryFilter): boolean {
  const receivedAt = Date.parse(record.receivedAt)
  if (filter.since !== undefined && !(receivedAt >= filter.since)) return false
  if (filter.until !== undefined && !(receivedAt <= filter.until)) return false
  if (filter.type !== undefined && record['type'] !== filter.type) return false
  if (filter.event !== undefined && record['event'] !== filter.event) return false
  if (filter.messageId !== undefined && record.messageId !== filter.messageId) return false
  if (filter.userId !== undefined && String(record['userId'] ?? '') !== filter.userId) return false
  return true
}

/** The window of a filter, epoch ms. */
function windowOf(filter: DeliveryFilter): { since: number; until: number } {
  return { since: filter.since ?? 0, until: filter.until ?? Date.now() }
}

/**
 * How many records of the archive the filter matches: a file wholly in the window counts by what
 * its listing says when the filter has no other field; any other is read.
 */
export async function countArchived(archives: SourceArchives, filter: DeliveryFilter): Promise<number> {
  const plain = filter.type === undefined && filter.event === undefined && filter.userId === undefined
  const onlyWindow = plain && filter.messageId === undefined
  const window = windowOf(filter)
  let matched = 0
  for (const source of sourcesOf(filter)) {
    const archive = archives.of(source)
    if (archive === undefined) continue
    const { files } = await listArchive(archive.store, archive.prefix, { source, ...window })
    for (const file of files) {
      const inside = Date.parse(file.first) >= window.since && Date.parse(file.last) <= window.until
      if (onlyWindow && inside) {
        matched += file.messages
        continue
      }
      for await (const record of decodeFile(parseKey(file.key)!.format, await archive.store.read(file.key))) {
        if (recordMatches(record, filter)) matched++
      }
    }
  }
  return matched
}

/** A reader of one replay's records from its position on. */
class Cursor {
  position: string
  readonly #records: AsyncGenerator<{ record: ArchiveRecord; source: string; at: Position }>
  #done = false

  constructor(archives: SourceArchives, replay: ReplayRecord, position: string) {
    this.position = position
    const from = position === '' ? undefined : (JSON.parse(position) as Position)
    this.#records = readFrom(archives, replay.filter, from)
  }

  /** Up to `room` matching records, with where it stands after them and whether it read them all. */
  async take(room: number): Promise<{ records: { record: ArchiveRecord; source: string }[]; done: boolean }> {
    const records: { record: ArchiveRecord; source: string }[] = []
    while (records.length < room && !this.#done) {
      const next = await this.#records.next()
      if (next.done === true) {
        this.#done = true
        break
      }
      records.push(next.value)
      this.position = JSON.stringify(next.value.at)
    }
    return { records, done: this.#done }
  }

  async close(): Promise<void> {
    await this.#records.return(undefined)
  }
}

// Every matching record of the filter's sources, after `from`, each with its own position (the
// record's index in its file counts every record, matching or not, so that it is stable).
async function* readFrom(
  archives: SourceArchives,
  filter: DeliveryFilter,
  from: Position | undefined,
): AsyncGenerator<{ record: ArchiveRecord; source: string; at: Position }> {
  const sources = sourcesOf(filter)
  const window = windowOf(filter)
  for (let s = from?.s ?? 0; s < sources.length; s++) {
    const source = sources[s]!
    const archive = archives.of(source)
    if (archive === undefined) continue
    const { files } = await listArchive(archive.store, archive.prefix, { source, ...window })
    const resumed = s === from?.s ? startOf(files, from) : { file: 0, record: 0 }
    // A message archived twice (a relay killed after writing its file) is in the same hour both
    // times: each hour's ids are kept to skip the second.
    let hour = ''
    let ids = new Set<string>()
    for (let f = resumed.file; f < files.length; f++) {
      const key = files[f]!.key
      const parts = parseKey(key)!
      if (`${parts.date}T${parts.hour}` !== hour) {
        hour = `${parts.date}T${parts.hour}`
        ids = new Set()
      }
      let r = 0
      for await (const record of decodeFile(parts.format, await archive.store.read(key))) {
        r++
        if (f === resumed.file && r <= resumed.record) continue
        if (!recordMatches(record, filter) || ids.has(record.messageId)) continue
        ids.add(record.messageId)
        yield { record, source, at: { s, f: key, r } }
      }
    }
  }
}

// Where to resume in a source's files: the file of the position, after its record; a file gone
// since (never, unless someone deleted it) resumes at the next key.
function startOf(files: readonly ListedFile[], from: Position): { file: number; record: number } {
  const index = files.findIndex((file) => file.key === from.f)
  if (index !== -1) return { file: index, record: from.r }
  const next = files.findIndex((file) => file.key > from.f)
  return { file: next === -1 ? files.length : next, record: 0 }
}

/** The copy of an archived record: a new delivery of its source's destination. */
function copyOf(record: ArchiveRecord, source: string, destination: string): ArchiveCopy {
  const userId = record['userId']
  const event = record['event']
  return {
    source,
    destination,
    messageId: record.messageId,
    type: typeof record['type'] === 'string' ? record['type'] : 'track',
    json: JSON.stringify(record),
    userId: typeof userId === 'string' || typeof userId === 'number' ? String(userId) : undefined,
    event: typeof event === 'string' ? event : undefined,
  }
}

/**
 * The steps of the replays from the archive, as the replay lane takes them: each makes the next
 * copies of the most overdue one, skipping the users erased (`POST /v1/deletions`).
 */
export class ArchiveQueuer {
  readonly #replays: ReplayStore
  readonly #archives: SourceArchives
  readonly #destination: string
  readonly #cursors = new Map<number, Cursor>()

  constructor(replays: ReplayStore, archives: SourceArchives, destination: string) {
    this.#replays = replays
    this.#archives = archives
    this.#destination = destination
  }

  /** One step: the copies made, and how long until another is due. */
  async step(): Promise<QueueStep> {
    const due = await this.#replays.dueFromArchive()
    if (!('replay' in due)) {
      await this.#forgetAll()
      return { queued: 0, nextIn: due.nextIn }
    }
    const { replay, position, room } = due
    const empty = { copies: [], position, done: false, room: 0 }
    if (room === 0) {
      await this.#replays.advanceFromArchive(replay.id, position, empty)
      return { queued: 0, nextIn: 0 }
    }
    let cursor = this.#cursors.get(replay.id)
    if (cursor === undefined || cursor.position !== position) {
      await cursor?.close()
      cursor = new Cursor(this.#archives, replay, position)
      this.#cursors.set(replay.id, cursor)
    }
    const { records, done } = await cursor.take(room)
    const userIds = [...new Set(records.flatMap(({ record }) => idOf(record['userId'])))]
    const erased = await this.#replays.erasedAmong(userIds)
    const copies = records
      .filter(({ record }) => !idOf(record['userId']).some((id) => erased.has(id)))
      .map(({ record, source }) => copyOf(record, source, this.#destination))
    const step = { copies, position: cursor.position, done, room }
    const written = await this.#replays.advanceFromArchive(replay.id, position, step)
    // Another relay stepped it first: this reader is behind, read from its position next time.
    if (written === 0 && copies.length > 0) this.#forget(replay.id)
    if (done) this.#forget(replay.id)
    return { queued: written, nextIn: 0 }
  }

  async close(): Promise<void> {
    await this.#forgetAll()
    await this.#archives.close()
  }

  #forget(id: number): void {
    const cursor = this.#cursors.get(id)
    this.#cursors.delete(id)
    void cursor?.close()
  }

  async #forgetAll(): Promise<void> {
    const cursors = [...this.#cursors.values()]
    this.#cursors.clear()
    await Promise.all(cursors.map((c) => c.close()))
  }
}

function idOf(userId: unknown): string[] {
  return typeof userId === 'string' || typeof userId === 'number' ? [String(userId)] : []
}
