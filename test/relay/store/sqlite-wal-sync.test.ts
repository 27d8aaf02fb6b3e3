import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { openSqliteDatabase } from '../../../src/relay/store/sqlite/schema'
import { SqliteStore } from '../../../src/relay/store/sqlite/sqlite-store'
import { type SyncableFile, WalSync } from '../../../src/relay/store/sqlite/wal-sync'

// Ingest on a SQLite file commits without waiting for the disk and then waits for a flush of the
// WAL off the event loop: a message is acknowledged only once a flush that began after its commit
// has returned (docs/sqlite.md).

interface Flush {
  resolve: () => void
  reject: (error: Error) => void
}

/** A WAL file whose flushes end when the test says, and which counts them. */
function heldFile(): SyncableFile & { flushes: Flush[]; closed: boolean } {
  const file = {
    flushes: [] as Flush[],
    closed: false,
    datasync: () =>
      new Promise<void>((resolve, reject) => {
        file.flushes.push({ resolve, reject })
      }),
    close: async () => {
      file.closed = true
    },
  }
  return file
}

/** Whether `promise` has settled, after the microtasks queued now have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false
  void promise.then(
    () => (done = true),
    () => (done = true),
  )
  await new Promise((resolve) => setImmediate(resolve))
  return done
}

describe('WalSync', () => {
  it('resolves a call only once a flush started after it has returned', async () => {
    const file = heldFile()
    const sync = new WalSync(file)
    const first = sync.durable()
    expect(file.flushes).toHaveLength(1)
    // Committed while the first flush runs: that flush may have missed it.
    const second = sync.durable()
    const third = sync.durable()
    expect(file.flushes).toHaveLength(1)

    file.flushes[0]!.resolve()
    expect(await settled(first)).toBe(true)
    expect(await settled(second)).toBe(false)
    // One more flush serves every call made meanwhile.
    expect(file.flushes).toHaveLength(2)
    file.flushes[1]!.resolve()
    expect(await settled(second)).toBe(true)
    expect(await settled(third)).toBe(true)
    expect(file.flushes).toHaveLength(2)
  })

  it('rejects the calls a failed flush served, and flushes again for the next call', async () => {
    const file = heldFile()
    const sync = new WalSync(file)
    const failed = sync.durable()
    const waiting = sync.durable()
    file.flushes[0]!.reject(new Error('EIO: i/o error, fdatasync'))
    await expect(failed).rejects.toThrow(/EIO/)
    // The call made during the failed flush still gets a flush of its own.
    expect(await settled(waiting)).toBe(false)
    file.flushes[1]!.resolve()
    await expect(waiting).resolves.toBeUndefined()

    const later = sync.durable()
    expect(file.flushes).toHaveLength(3)
    file.flushes[2]!.resolve()
    await expect(later).resolves.toBeUndefined()
  })

  it('closes the file only after the flushes under way', async () => {
    const file = heldFile()
    const sync = new WalSync(file)
    const flushing = sync.durable()
    const closing = sync.close()
    expect(await settled(closing)).toBe(false)
    expect(file.closed).toBe(false)
    file.flushes[0]!.resolve()
    await flushing
    await closing
    expect(file.closed).toBe(true)
  })
})

describe('the SQLite store on a file', () => {
  let dir: string | undefined
  afterEach(() => {
    vi.restoreAllMocks()
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
    dir = undefined
  })

  it('acknowledges an enqueue only after the WAL flush that follows its commit, and keeps the rows', async () => {
    dir = mkdtempSync(join(tmpdir(), 'tracklet-wal-sync-'))
    const file = join(dir, 'relay.db')
    const db = await openSqliteDatabase(file)
    const store = new SqliteStore(db)
    const flushes: Flush[] = []
    vi.spyOn(WalSync.prototype, 'durable').mockImplementation(
      () => new Promise<void>((resolve, reject) => flushes.push({ resolve, reject })),
    )
    const enqueued = store.enqueue([
      { source: 'web', destination: 'Webhooks', messageId: 'm1', type: 'track', json: '{"messageId":"m1"}' },
    ])
    expect(flushes).toHaveLength(1)
    expect(await settled(enqueued)).toBe(false)
    flushes[0]!.resolve()
    await expect(enqueued).resolves.toBe(1)
    // The commit skipped SQLite's own wait; every other write still waits for the disk on its thread.
    expect(db.pragma('synchronous', { simple: true })).toBe(2) // FULL

    // A flush that fails refuses the request (the client sends again; the duplicate check keeps one copy).
    const refused = store.enqueue([
      { source: 'web', destination: 'Webhooks', messageId: 'm2', type: 'track', json: '{"messageId":"m2"}' },
    ])
    flushes[1]!.reject(new Error('EIO: i/o error, fdatasync'))
    await expect(refused).rejects.toThrow(/EIO/)
    vi.restoreAllMocks()
    await expect(
      store.enqueue([
        { source: 'web', destination: 'Webhooks', messageId: 'm2', type: 'track', json: '{"messageId":"m2"}' },
      ]),
    ).resolves.toBe(0)
    await store.close()

    const reader = new Database(file, { readonly: true })
    expect(reader.prepare('SELECT message_id FROM deliveries ORDER BY id').pluck().all()).toEqual(['m1', 'm2'])
    reader.close()
  })

  it('flushes through the WAL file on a file, and commits with synchronous = FULL where there is none', async () => {
    dir = mkdtempSync(join(tmpdir(), 'tracklet-wal-sync-'))
    const onFile = await openSqliteDatabase(join(dir, 'relay.db'))
    const inMemory = await openSqliteDatabase(':memory:')
    const sync = WalSync.open(onFile)
    expect(sync).toBeInstanceOf(WalSync)
    await sync!.durable()
    await sync!.close()
    expect(WalSync.open(inMemory)).toBeUndefined()

    const store = new SqliteStore(inMemory)
    // The store sets it with statements prepared once: every statement's run is watched.
    const settings = vi.spyOn(Object.getPrototypeOf(inMemory.prepare('SELECT 1')) as { run: () => unknown }, 'run')
    await store.enqueue([
      { source: 'web', destination: 'Webhooks', messageId: 'm1', type: 'track', json: '{"messageId":"m1"}' },
    ])
    const sources = settings.mock.contexts.map((context) => (context as { source: string }).source)
    expect(sources.some((text) => text.includes('INSERT OR IGNORE INTO deliveries'))).toBe(true)
    expect(sources.filter((text) => text.startsWith('PRAGMA synchronous'))).toEqual([])
    settings.mockRestore()
    await store.close()
    onFile.close()
  })
})
