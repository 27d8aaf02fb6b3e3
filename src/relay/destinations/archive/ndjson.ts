import { StringDecoder } from 'node:string_decoder'
import { Readable } from 'node:stream'
import { constants, createGunzip, createGzip } from 'node:zlib'
import { type ArchiveRecord, archiveLine } from './record'
import type { OutboundMessage } from './types'

// gzip's fastest level: a third of the default's CPU per message for files about an eighth larger
// (bench/archive.mjs; docs/archive.md, "Cost"), where the archive's CPU is what a busy relay pays.
const GZIP_LEVEL = constants.Z_BEST_SPEED

// Lines go to gzip in chunks of about this many characters: a file of 100,000 messages of up to
// 32 KB each would not fit in one string (V8's limit is about 512 M characters).
const CHUNK_CHARS = 1 << 20

/** Gzipped NDJSON: one record a line (JSON escapes every newline inside a value). */
export async function encodeNdjson(batch: readonly OutboundMessage[]): Promise<Uint8Array> {
  // zlib's thread pool, not the event loop, compresses: a file is tens of megabytes.
  const gzip = createGzip({ level: GZIP_LEVEL })
  const parts: Buffer[] = []
  gzip.on('data', (part: Buffer) => parts.push(part))
  const done = new Promise<void>((resolve, reject) => {
    gzip.once('end', resolve)
    gzip.once('error', reject)
  })
  let text = ''
  for (const one of batch) {
    text += `${archiveLine(one)}\n`
    if (text.length >= CHUNK_CHARS) {
      gzip.write(text)
      text = ''
    }
  }
  gzip.end(text)
  await done
  return Buffer.concat(parts)
}

/**
 * The records of a gzipped NDJSON file, line by line (a file may be larger than a string). Lines
 * end at "\n" only: JSON.stringify leaves U+2028 and U+2029 raw inside strings, and readline
 * ends a line at them on some Node versions (seen on Node 24), which would cut a record in two.
 */
export async function* decodeNdjson(body: Uint8Array): AsyncGenerator<ArchiveRecord> {
  const text = new StringDecoder('utf8') // a character split across chunks waits for its rest
  let pending = ''
  for await (const chunk of Readable.from([body]).pipe(createGunzip())) {
    pending += text.write(chunk as Buffer)
    let end = pending.indexOf('\n')
    let start = 0
    while (end !== -1) {
      const line = pending.slice(start, end)
      if (line !== '') yield JSON.parse(line) as ArchiveRecord
      start = end + 1
      end = pending.indexOf('\n', start)
    }
    pending = pending.slice(start)
  }
  pending += text.end()
  if (pending !== '') yield JSON.parse(pending) as ArchiveRecord
}
