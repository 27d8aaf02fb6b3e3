import type { ArchiveFormat } from './settings'

// The archive's layout, Hive-style so that DuckDB, ClickHouse, Spark and Athena read it as it is:
// <prefix>/source=<name>/date=YYYY-MM-DD/hour=HH/<relay>-<first>-<last>.<ext>

/** Each format's file extension: what readers glob (`**\/*.ndjson.gz`). */
export const EXTENSIONS: Readonly<Record<ArchiveFormat, string>> = Object.freeze({
  ndjson: 'ndjson.gz',
  parquet: 'parquet',
})

/** One hour of receipt, UTC: a file holds one hour's messages. */
export interface Hour {
  /** `YYYY-MM-DD` */
  date: string
  /** `00` to `23` */
  hour: string
}

/** A file's name, taken apart. */
export interface FileName {
  relay: string
  /** The outbox ids of the file's first and last message. */
  first: number
  last: number
  format: ArchiveFormat
}

const HOUR_MS = 3_600_000
const DAY_MS = 24 * HOUR_MS

/** The UTC hour of an ISO 8601 time (or epoch ms). */
export function hourOf(time: string | number): Hour {
  const ms = typeof time === 'number' ? time : Date.parse(time)
  if (!Number.isFinite(ms)) throw new RangeError(`not a time: ${JSON.stringify(time)}`)
  const iso = new Date(ms).toISOString()
  return { date: iso.slice(0, 10), hour: iso.slice(11, 13) }
}

/**
 * A partition value as Hive escapes it: every byte outside `[A-Za-z0-9_-]` (and a leading `.`,
 * which would hide the folder) as `%XX`, so a source named `a/b` or `x=y` stays one folder.
 */
export function escapeSegment(value: string): string {
  return [...Buffer.from(value, 'utf8')]
    .map((byte, index) => {
      const char = String.fromCharCode(byte)
      const plain = /[A-Za-z0-9_-]/.test(char) || (char === '.' && index > 0)
      return plain ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
    })
    .join('')
}

/** The folder of a source's hour, under the prefix (`''` for the top). */
export function hourFolder(prefix: string, source: string, { date, hour }: Hour): string {
  return join(prefix, `source=${escapeSegment(source)}`, `date=${date}`, `hour=${hour}`)
}

/** The folder of a source, under the prefix. */
export function sourceFolder(prefix: string, source: string): string {
  return join(prefix, `source=${escapeSegment(source)}`)
}

/** The folder of a source's day, under the prefix. */
export function dateFolder(prefix: string, source: string, date: string): string {
  return join(sourceFolder(prefix, source), `date=${date}`)
}

/** A file's name: the relay and the outbox ids make it unique across relays and workers. */
export function fileName({ relay, first, last, format }: FileName): string {
  return `${escapeSegment(relay)}-${first}-${last}.${EXTENSIONS[format]}`
}

/** A file's key: its folder and name. */
export function fileKey(prefix: string, source: string, hour: Hour, name: FileName): string {
  return `${hourFolder(prefix, source, hour)}/${fileName(name)}`
}

/**
 * The name a file is written under before it is whole: it starts with `.` and does not end in
 * the final extension, so no reader's glob sees it.
 */
export function temporaryName(name: string, nonce: string): string {
  return `.${name}.${nonce}.tmp`
}

const NAME = /^(.+)-(\d+)-(\d+)\.(ndjson\.gz|parquet)$/
const KEY = /(?:^|\/)source=([^/]+)\/date=(\d{4}-\d{2}-\d{2})\/hour=(\d{2})\/([^/]+)$/

/** A key taken apart, or `undefined` for one that is not an archive file's. */
export function parseKey(key: string): (FileName & Hour & { source: string }) | undefined {
  const parts = KEY.exec(key)
  const name = parts && NAME.exec(parts[4]!)
  if (!parts || !name) return undefined
  const format = name[4] === EXTENSIONS.parquet ? 'parquet' : 'ndjson'
  return {
    source: decodeURIComponent(parts[1]!),
    date: parts[2]!,
    hour: parts[3]!,
    relay: decodeURIComponent(name[1]!),
    first: Number(name[2]),
    last: Number(name[3]),
    format,
  }
}

/** A day's folder name, `date=YYYY-MM-DD`, with the day. */
export const DATE_FOLDER = /^date=(\d{4}-\d{2}-\d{2})$/

/** The days (`YYYY-MM-DD`, UTC) a window of receipt touches, oldest first. */
export function datesOf(since: number, until: number): string[] {
  const dates: string[] = []
  for (let day = Math.floor(since / DAY_MS); day * DAY_MS <= until; day++) {
    dates.push(new Date(day * DAY_MS).toISOString().slice(0, 10))
  }
  return dates
}

/** Whether an hour of receipt overlaps the window `[since, until]` (epoch ms). */
export function hourInWindow({ date, hour }: Hour, since: number, until: number): boolean {
  const start = Date.parse(`${date}T${hour}:00:00.000Z`)
  return start <= until && start + HOUR_MS > since
}

function join(...parts: string[]): string {
  return parts.filter((part) => part !== '').join('/')
}
