import { join } from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Archive } from '../../../src/relay/destinations/archive/module'
import { parseArchiveSettings } from '../../../src/relay/destinations/archive/settings'
import { outbound, tempFolder } from './support'

// docs/archive.md's queries, run by DuckDB on the files as the archive wrote them.
const QUERIES = {
  ndjson: (root: string) =>
    `SELECT messageId, event, receivedAt, source, date, hour, properties.revenue AS revenue
     FROM read_json_auto('${root}/source=*/**/*.ndjson.gz', hive_partitioning = true)
     ORDER BY messageId`,
  parquet: (root: string) =>
    `SELECT messageId, event, receivedAt, source, date, hour,
            CAST(json_extract(message, '$.properties.revenue') AS INTEGER) AS revenue
     FROM read_parquet('${root}/source=*/**/*.parquet', hive_partitioning = true)
     ORDER BY messageId`,
}

describe('the archive read by DuckDB', () => {
  let folder: Awaited<ReturnType<typeof tempFolder>>
  beforeEach(async () => {
    folder = await tempFolder()
  })
  afterEach(() => folder.remove())

  it.each(['ndjson', 'parquet'] as const)('reads the %s files as they are, partitions included', async (format) => {
    const root = join(folder.path, 'archive')
    const sender = Archive.create(parseArchiveSettings({ url: `file://${root}`, format }, 'Archive'), {
      source: 'web',
      relayId: 'r1',
    })
    const batch = [
      outbound(1, '2026-03-01T07:59:59.000Z'),
      outbound(2, '2026-03-01T08:00:01.000Z'),
      outbound(3, '2026-03-02T00:00:00.000Z'),
    ]
    expect((await sender.sendBatch(batch)).map((outcome) => outcome.kind)).toEqual([
      'delivered',
      'delivered',
      'delivered',
    ])

    const duck = await DuckDBInstance.create(':memory:')
    const connection = await duck.connect()
    try {
      const rows = await (await connection.runAndReadAll(QUERIES[format](root))).getRowObjectsJson()
      const seen = rows.map((row) => ({
        messageId: row['messageId'],
        event: row['event'],
        receivedAt: new Date(String(row['receivedAt'])).toISOString(),
        partition: `${row['source']}/${row['date']}/${Number(row['hour'])}`,
        revenue: Number(row['revenue']),
      }))
      expect(seen).toEqual(
        batch.map(({ message, receivedAt }, index) => ({
          messageId: message.messageId,
          event: 'Order Completed',
          receivedAt,
          partition: ['web/2026-03-01/7', 'web/2026-03-01/8', 'web/2026-03-02/0'][index],
          revenue: index + 1,
        })),
      )
    } finally {
      connection.closeSync()
      duck.closeSync()
    }
  })
})
