import { promisify } from 'node:util'
import { gunzip, gzip } from 'node:zlib'
import { type ArchiveRecord, archiveLine } from './record'
import type { OutboundMessage } from './types'

const gzipAsync = promisify(gzip)
const gunzipAsync = promisify(gunzip)

/** Gzipped NDJSON: one record a line (JSON escapes every newline inside a value). */
export async function encodeNdjson(batch: readonly OutboundMessage[]): Promise<Uint8Array> {
  let text = ''
  for (const one of batch) text += `${archiveLine(one)}\n`
  // zlib's thread pool, not the event loop: a file of 100,000 messages is tens of megabytes.
  return gzipAsync(text)
}

/** The records of a gzipped NDJSON file. */
export async function decodeNdjson(body: Uint8Array): Promise<ArchiveRecord[]> {
  const text = (await gunzipAsync(body)).toString('utf8')
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as ArchiveRecord)
}
