import { loadPackage } from './load-package'
import { RELAY_PEERS } from '../../peers'
import { type ArchiveRecord, archiveRecord } from './record'
import type { OutboundMessage } from './types'

/** The Parquet file's columns beside `message` (the whole record as JSON text). */
export const PARQUET_COLUMNS = ['messageId', 'type', 'event', 'userId', 'anonymousId', 'timestamp', 'receivedAt']
const TIMES = new Set(['timestamp', 'receivedAt'])

const writer = () => loadPackage(RELAY_PEERS.parquetArchive, 'hyparquet-writer', () => import('hyparquet-writer'))
const reader = () => loadPackage(RELAY_PEERS.parquetArchive, 'hyparquet', () => import('hyparquet'))

/** A Parquet file (Snappy): the named columns, times as timestamps, and `message` as JSON. */
export async function encodeParquet(batch: readonly OutboundMessage[]): Promise<Uint8Array> {
  const { parquetWriteBuffer } = await writer()
  const records = batch.map(archiveRecord)
  const columnData = [
    ...PARQUET_COLUMNS.map((name) =>
      TIMES.has(name)
        ? { name, type: 'TIMESTAMP' as const, data: records.map((record) => timeOf(record[name])) }
        : { name, type: 'STRING' as const, data: records.map((record) => textOf(record[name])) },
    ),
    // The writer serialises a JSON column's values itself.
    { name: 'message', type: 'JSON' as const, data: records },
  ]
  return new Uint8Array(parquetWriteBuffer({ columnData, createdBy: 'tracklet archive' }))
}

/** The records of a Parquet file written by {@link encodeParquet} (read from `message`). */
export async function* decodeParquet(body: Uint8Array): AsyncGenerator<ArchiveRecord> {
  const { parquetReadObjects } = await reader()
  const file = body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength) as ArrayBuffer
  const rows = await parquetReadObjects({ file, columns: ['message'] })
  for (const row of rows) {
    const message = row['message']
    yield (typeof message === 'string' ? JSON.parse(message) : message) as ArchiveRecord
  }
}

function textOf(value: unknown): string | null {
  return typeof value === 'string' ? value : null
}

function timeOf(value: unknown): Date | null {
  const ms = typeof value === 'string' ? Date.parse(value) : Number.NaN
  return Number.isFinite(ms) ? new Date(ms) : null
}
