import { copyFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { openSqliteDatabase } from '../../../src/relay/store/sqlite/schema'
import { openSqliteStore } from '../../../src/relay/store/sqlite/sqlite-store'
import {
  CHECKPOINT_THREAD_AFTER,
  OWN_CHECKPOINT_PAGES,
  WalCheckpointer,
} from '../../../src/relay/store/sqlite/wal-checkpointer'
import { waitFor } from '../../support/wait-for'

// A SQLite store's WAL is checkpointed on a thread of its own once the store has enqueued a few
// deliveries (src/relay/store/sqlite/wal-checkpointer.ts): the relay's thread never copies pages
// into the file nor waits for the disk's flushes of a checkpoint. What a checkpoint did shows in
// the database file alone: a copy of it without its WAL holds the rows checkpointed.
const dir = mkdtempSync(join(tmpdir(), 'tracklet-checkpointer-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

// Rows of `table` (those `where` says) in a copy of the database file `file` without its WAL.
function rowsInFileAlone(file: string, table: string, where = 'true'): number {
  const copy = join(dir, `copy-${Math.random().toString(36).slice(2)}.db`)
  copyFileSync(file, copy)
  const db = new Database(copy, { readonly: true })
  try {
    const count = db.prepare(`SELECT count(*) AS n FROM ${table} WHERE ${where}`)
    return (count.get() as { n: number }).n
  } catch {
    return 0 // the table's creation itself is still in the WAL
  } finally {
    db.close()
    rmSync(copy, { force: true })
  }
}

describe('the SQLite checkpoint thread', () => {
  it('checkpoints on its own connection; the store’s own only far later', async () => {
    const file = join(dir, 'direct.db')
    const db = await openSqliteDatabase(file)
    const checkpointer = new WalCheckpointer(db, file, { startAfter: 0 })
    try {
      db.exec('CREATE TABLE t (x TEXT)')
      const insert = db.prepare('INSERT INTO t (x) VALUES (?)')
      db.transaction(() => {
        for (let i = 0; i < 500; i++) insert.run(`row ${i}`)
      })()
      expect(rowsInFileAlone(file, 't')).toBe(0)
      checkpointer.committed(500)
      await checkpointer.idle()
      expect(checkpointer.last?.log).toBeGreaterThan(0)
      expect(checkpointer.last?.checkpointed).toBe(checkpointer.last?.log)
      expect(checkpointer.last?.restarted).toBe(true)
      expect(rowsInFileAlone(file, 't')).toBe(500)
      expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(OWN_CHECKPOINT_PAGES)
    } finally {
      await checkpointer.close()
      db.close()
    }
  })

  it('starts no thread before the store enqueued a few deliveries: SQLite does', async () => {
    const file = join(dir, 'few.db')
    const db = await openSqliteDatabase(file)
    const checkpointer = new WalCheckpointer(db, file)
    try {
      checkpointer.committed(CHECKPOINT_THREAD_AFTER - 1)
      await checkpointer.idle()
      expect(checkpointer.last).toBeUndefined()
      expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000)
    } finally {
      await checkpointer.close()
      db.close()
    }
  })

  it('runs under the store once it has enqueued enough, and ends with it', async () => {
    const file = join(dir, 'store.db')
    const store = await openSqliteStore(file)
    try {
      const deliveries = Array.from({ length: CHECKPOINT_THREAD_AFTER }, (_, i) => ({
        source: 'web',
        destination: 'Webhooks',
        messageId: `m-${i}`,
        type: 'track',
        json: JSON.stringify({ type: 'track', messageId: `m-${i}`, event: 'E' }),
      }))
      expect(await store.enqueue(deliveries)).toBe(CHECKPOINT_THREAD_AFTER)
      // Far fewer pages than SQLite's own threshold: only the thread puts them in the file.
      await waitFor(
        () => (rowsInFileAlone(file, 'deliveries') === CHECKPOINT_THREAD_AFTER ? true : undefined),
        'the deliveries in the database file',
      )
      // Delivery's writes ask for checkpoints too: outcomes reach the file without another enqueue.
      const claimed = await store.claim({ source: 'web', limit: 10, owner: 'w1', leaseMs: 30_000 })
      const requests = [{ url: 'https://a.example/hook', status: 200, ms: 3 }]
      const next = { status: 'delivered' as const }
      const delivered = "status = 'delivered'"
      await store.record(claimed.map(({ id }) => ({ id, at: Date.now(), requests, next })))
      await waitFor(
        () => (rowsInFileAlone(file, 'deliveries', delivered) === 10 ? true : undefined),
        'the outcomes in the database file',
      )
    } finally {
      await store.close()
    }
  })
})
