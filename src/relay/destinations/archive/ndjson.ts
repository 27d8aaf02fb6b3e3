import { createInterface } from 'node:readline'
import { Readable } from 'node:stream'
import { createGunzip, createGzip } from 'node:zlib'
import { type ArchiveRecord, archiveLine } from './record'
import type { OutboundMessage } from './types'

// Lines go to gzip in chunks of about this many characters: a file of 100,000 messages of up to
// 32 KB each would not fit in one string (V8's limit is about 512 M characters).
const CHUNK_CHARS = 1 << 20

/** Gzipped NDJSON: one record a line (JSON escapes every newline inside a value). */
export async function encodeNdjson(batch: readonly OutboundMessage[]): Promise<Uint8Array> {
  // zlib's thread pool, not the event loop, compresses: a file is tens of megabytes.
  const gzip = createGzip()
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

/** The records of a gzipped NDJSON file, line by line (a file may be larger than a string). */
export async function* decodeNdjson(body: Uint8Array): AsyncGenerator<ArchiveRecord> {
  const lines = createInterface({
    input: Readable.from([body]).pipe(createGunzip()),
    crlfDelay: Number.POSITIVE_INFINITY,
  })
  for await (const line of lines) if (line !== '') yield JSON.parse(line) as ArchiveRecord
}
