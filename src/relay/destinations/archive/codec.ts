import { decodeNdjson, encodeNdjson } from './ndjson'
import { decodeParquet, encodeParquet } from './parquet'
import type { ArchiveRecord } from './record'
import type { ArchiveFormat } from './settings'

/** A file's bytes for its records, in a format. */
export function encodeFile(format: ArchiveFormat, records: readonly ArchiveRecord[]): Promise<Uint8Array> {
  return format === 'parquet' ? encodeParquet(records) : encodeNdjson(records)
}

/** A file's records, by its format. */
export function decodeFile(format: ArchiveFormat, body: Uint8Array): Promise<ArchiveRecord[]> {
  return format === 'parquet' ? decodeParquet(body) : decodeNdjson(body)
}
