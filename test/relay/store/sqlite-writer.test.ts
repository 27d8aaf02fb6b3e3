import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { openSqliteDatabase, type SqliteDatabase } from '../../../src/relay/store/sqlite/schema'
import { SqliteStore } from '../../../src/relay/store/sqlite/sqlite-store'
import type { NewDelivery } from '../../../src/relay/store/store'

// On a SQLite file, ingest's inserts run on a writer thread with a connection of its own
// (docs/sqlite.md, "The writer thread"): the relay's thread only binds the values.

const delivery = (messageId: string): NewDelivery => ({
  source: 'web',
  destination: 'Webhooks',
  messageId,
  type: 'track',
  json: JSON.stringify({ messageId, userId: 'ada' }),
})

// Rows changed through this connection since it opened (SQLite counts them per connection).
const changedHere = (db: SqliteDatabase) => db.prepare('SELECT total_changes()').pluck().get() as number

describe('the SQLite store’s writer thread', () => {
  let dir: string | undefined
  afterEach(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
    dir = undefined
  })

  async function open(): Promise<{ store: SqliteStore; db: SqliteDatabase; file: string }> {
    dir = mkdtempSync(join(tmpdir(), 'tracklet-writer-'))
    const file = join(dir, 'relay.db')
    const db = await openSqliteDatabase(file)
    return { store: new SqliteStore(db), db, file }
  }

  it('writes ingest through another connection, each message once, readable once enqueue resolves', async () => {
    const { store, db } = await open()
    try {
      const before = changedHere(db)
      const many = Array.from({ length: 60 }, (_, i) => delivery(`m${i}`)) // two full statements and ten rows
      const [first, second] = await Promise.all([store.enqueue(many), store.enqueue([delivery('x')])])
      expect([first, second]).toEqual([60, 1])
      // Sent again: skipped by the duplicate check, as on the relay's thread.
      expect(await store.enqueue([delivery('m0'), delivery('y')])).toBe(1)
      expect(changedHere(db)).toBe(before)
      const page = await store.listNewest({ limit: 100 })
      expect(page).toHaveLength(62)
      expect(page[0]).toMatchObject({ messageId: 'y', status: 'pending' })
    } finally {
      await store.close()
    }
  })

  it('refuses only the write whose values the driver cannot bind, with its message, and goes on', async () => {
    const { store } = await open()
    try {
      const bad = {
        ...delivery('bad'),
        json: { not: 'a string' } as unknown as string,
        searchKeys: { userId: null, event: null },
      }
      const refused = store.enqueue([bad])
      const kept = store.enqueue([delivery('good')])
      await expect(refused).rejects.toThrow(/can only bind/)
      expect(await kept).toBe(1)
      expect(await store.enqueue([delivery('after')])).toBe(1)
    } finally {
      await store.close()
    }
  })

  it('closes only once the writes handed to it are in the file', async () => {
    const { store, file } = await open()
    const writes = Array.from({ length: 20 }, (_, i) => store.enqueue([delivery(`c${i}`)]))
    await store.close()
    expect((await Promise.all(writes)).every((n) => n === 1)).toBe(true)
    const reader = new Database(file, { readonly: true })
    try {
      expect(reader.prepare('SELECT count(*) FROM deliveries').pluck().get()).toBe(20)
    } finally {
      reader.close()
    }
  })
})
