import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { decodeFile } from '../../../src/relay/destinations/archive/codec'
import { FileStore } from '../../../src/relay/destinations/archive/file-store'
import { parseKey } from '../../../src/relay/destinations/archive/layout'
import { listArchive } from '../../../src/relay/destinations/archive/listing'
import { S3Store } from '../../../src/relay/destinations/archive/s3-store'
import type { ArchiveStore } from '../../../src/relay/destinations/archive/store'
import { createRelay, type Relay } from '../../../src/relay/index'
import { throwawayDatabase } from '../../support/stores'
import { startTcpProxy } from '../../support/tcp-proxy'
import { ADMIN_TOKEN, adminGet, post, track, WRITE_KEY, waitFor } from '../helpers'
import { S3RVER_KEYS, startS3, tempFolder } from './support'

const WINDOW = () => ({ source: 'web', since: Date.now() - 3_600_000, until: Date.now() + 60_000 })

/** Every messageId in the archive's files, with how many times each is there. */
async function archivedIds(store: ArchiveStore, prefix: string): Promise<Map<string, number>> {
  const ids = new Map<string, number>()
  // The reader drops a second copy; this counts what the files hold, file by file.
  const { files } = await listArchive(store, prefix, WINDOW())
  for (const file of files) {
    for await (const record of decodeFile('ndjson', await store.read(file.key))) {
      ids.set(record.messageId, (ids.get(record.messageId) ?? 0) + 1)
    }
  }
  return ids
}

async function delivered(url: string, count: number): Promise<void> {
  await waitFor(
    async () => {
      const { body } = await adminGet(`${url}/v1/deliveries?status=delivered&limit=500`)
      return (body.deliveries as unknown[]).length >= count || undefined
    },
    `${count} deliveries delivered`,
    30_000,
  )
}

describe('relays archiving together, and a bucket down then back', () => {
  let folder: Awaited<ReturnType<typeof tempFolder>>
  const relays: Relay[] = []
  beforeEach(async () => {
    folder = await tempFolder()
  })
  afterEach(async () => {
    await Promise.all(relays.splice(0).map((relay) => relay.close()))
    await folder.remove()
  })

  const start = async (database: string, archive: object) => {
    const relay = await createRelay({
      port: 0,
      database,
      adminToken: ADMIN_TOKEN,
      sources: [{ name: 'web', writeKey: WRITE_KEY, destinations: { Archive: archive } }],
    })
    relays.push(relay)
    return relay
  }

  it('two relays on one PostgreSQL write one folder: no name collides, every message once', async () => {
    const database = await throwawayDatabase('postgres')
    const root = join(folder.path, 'archive')
    const settings = { url: `file://${root}`, maxFileSeconds: 1, maxFileMessages: 20 }
    const [a, b] = [await start(database, settings), await start(database, settings)]
    const messages = Array.from({ length: 200 }, (_, i) => track({ messageId: `p-${i}` }))
    // Half through each relay: both claim from the one outbox.
    for (let i = 0; i < 200; i += 20) {
      const relay = i % 40 === 0 ? a! : b!
      expect((await post(`${relay.url}/v1/batch`, { batch: messages.slice(i, i + 20) })).status).toBe(200)
    }
    await delivered(a!.url, 200)
    const store = new FileStore(root)
    const ids = await archivedIds(store, '')
    expect([...ids.keys()].sort()).toEqual(messages.map((m) => String(m['messageId'])).sort())
    expect([...ids.values()].every((count) => count === 1)).toBe(true)
    const { files } = await listArchive(store, '', WINDOW())
    const writers = new Set(files.map((file) => parseKey(file.key)!.relay))
    expect(writers.size).toBe(2)
  })

  it('keeps every message while the bucket is down, and writes them once it is back', async () => {
    const s3 = await startS3()
    const proxy = await startTcpProxy(Number(new URL(s3.endpoint).port))
    try {
      const s3Settings = { region: 'us-east-1', endpoint: `http://127.0.0.1:${proxy.port}`, ...S3RVER_KEYS }
      const relay = await start(await throwawayDatabase('sqlite'), {
        url: 's3://archive/down',
        s3: s3Settings,
        maxFileSeconds: 1,
      })
      await proxy.cut()
      const messages = Array.from({ length: 30 }, (_, i) => track({ messageId: `d-${i}` }))
      expect((await post(`${relay.url}/v1/batch`, { batch: messages })).status).toBe(200)
      await waitFor(async () => {
        const { body } = await adminGet(`${relay.url}/v1/deliveries?limit=100`)
        const errors = (body.deliveries as { lastError?: string; error?: string }[]).map((d) => JSON.stringify(d))
        return errors.some((text) => text.includes('unreachable')) || undefined
      }, 'a failed attempt while the bucket is down')
      await proxy.restore()
      await delivered(relay.url, 30)
      const store = new S3Store({
        kind: 's3',
        bucket: 'archive',
        prefix: 'down',
        forcePathStyle: true,
        region: 'us-east-1',
        endpoint: s3.endpoint,
        ...S3RVER_KEYS,
      })
      const ids = await archivedIds(store, 'down')
      expect([...ids.keys()].sort()).toEqual(messages.map((m) => String(m['messageId'])).sort())
    } finally {
      await proxy.close()
      await s3.stop()
    }
  })
})
