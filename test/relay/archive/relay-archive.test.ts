import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { FileStore } from '../../../src/relay/destinations/archive/file-store'
import { readArchive } from '../../../src/relay/destinations/archive/reader'
import { createRelay, type Relay, RelayConfigError } from '../../../src/relay/index'
import { throwawayDatabase } from '../../support/stores'
import { ADMIN_TOKEN, adminGet, post, track, WRITE_KEY, waitFor } from '../helpers'
import { tempFolder } from './support'

describe('a relay archiving to a folder, on the embedded default (SQLite)', () => {
  let folder: Awaited<ReturnType<typeof tempFolder>>
  let relay: Relay | undefined
  beforeEach(async () => {
    folder = await tempFolder()
  })
  afterEach(async () => {
    await relay?.close()
    relay = undefined
    await folder.remove()
  })

  const start = async (archive: unknown) => {
    relay = await createRelay({
      port: 0,
      database: await throwawayDatabase('sqlite'),
      adminToken: ADMIN_TOKEN,
      sources: [{ name: 'web', writeKey: WRITE_KEY, destinations: { Archive: archive as object } }],
    })
    return relay
  }

  it('refuses bad settings at start, each problem by its path', async () => {
    const error = await start({ url: 'ftp://x', maxFileSeconds: 0 }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(RelayConfigError)
    expect((error as RelayConfigError).problems.map((p) => p.field).sort()).toEqual([
      'sources[0].destinations.Archive.maxFileSeconds',
      'sources[0].destinations.Archive.url',
    ])
  })

  it('keeps every message in a file, each delivery delivered once its file is durable', async () => {
    const root = join(folder.path, 'archive')
    const { url } = await start({ url: `file://${root}`, maxFileSeconds: 1 })
    const messages = Array.from({ length: 25 }, (_, i) => track({ messageId: `a-${i}`, properties: { i } }))
    expect((await post(`${url}/v1/batch`, { batch: messages })).status).toBe(200)

    const log = await waitFor(async () => {
      const { body } = await adminGet(`${url}/v1/deliveries?limit=100`)
      const settled = (body.deliveries as { status: string }[]).filter((d) => d.status === 'delivered')
      return settled.length === 25 ? body.deliveries : undefined
    }, '25 archive deliveries delivered')
    expect(new Set(log.map((d: { destination: string }) => d.destination))).toEqual(new Set(['Archive']))
    // The endpoints view shows the archive like a receiver: its place, never a secret.
    const { body: endpoints } = await adminGet(`${url}/v1/endpoints`)
    expect(JSON.stringify(endpoints)).toContain(`file://${root}`)

    const window = { source: 'web', since: Date.now() - 3_600_000, until: Date.now() + 60_000 }
    const records = []
    for await (const record of readArchive(new FileStore(root), '', window)) records.push(record)
    expect(records.map((record) => record.messageId).sort()).toEqual(messages.map((m) => m['messageId']).sort())
    for (const record of records) {
      expect(record).toMatchObject({ type: 'track', event: 'Signed Up', userId: 'u1' })
      expect(Date.parse(record.receivedAt)).toBeGreaterThan(window.since)
    }
  })
})
