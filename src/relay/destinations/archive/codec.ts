import { decodeNdjson, encodeNdjson } from './ndjson'
import { decodeParquet, encodeParquet } from './parquet'
import type { ArchiveRecord } from './record'
import type { ArchiveFormat } from './settings'
import type { OutboundMessage } from './types'

/** A file's bytes for its messages' records, in a format. */
export function encodeFile(format: ArchiveFormat, batch: readonly OutboundMessage[]): Promise<Uint8Array> {
  return format === 'parquet' ? encodeParquet(batch) : encodeNdjson(batch)
}

/** A file's records, by its format, one at a time. */
export function decodeFile(format: ArchiveFormat, body: Uint8Array): AsyncGenerator<ArchiveRecord> {
  return format === 'parquet' ? decodeParquet(body) : decodeNdjson(body)
}
