import { execFileSync } from 'node:child_process'
import { mkdirSync, readdirSync, rmSync } from 'node:fs'
import * as fs from 'node:fs/promises'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { FileStore } from '../../../src/relay/destinations/archive/file-store'
import { listArchive } from '../../../src/relay/destinations/archive/listing'
import { Archive } from '../../../src/relay/destinations/archive/module'
import { readArchive } from '../../../src/relay/destinations/archive/reader'
import { ArchiveSender } from '../../../src/relay/destinations/archive/sender'
import { parseArchiveSettings } from '../../../src/relay/destinations/archive/settings'
import { outbound, tempFolder } from './support'

const PATH = 'sources[0].destinations.Archive'

/** Every file under a folder, hidden ones included, by path from it. */
function allFiles(root: string): string[] {
  return (readdirSync(root, { recursive: true, withFileTypes: true }) as import('node:fs').Dirent[])
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(root.length + 1))
    .sort()
}

describe('the archive in a folder', () => {
  let folder: Awaited<ReturnType<typeof tempFolder>>
  beforeEach(async () => {
    folder = await tempFolder()
  })
  afterEach(() => folder.remove())

  const create = (format = 'ndjson', root = folder.path) =>
    Archive.create(parseArchiveSettings({ url: `file://${root}/archive`, format }, PATH), {
      source: 'web',
      relayId: 'r1',
    })

  it('writes one whole file per hour of receipt, each line the message with messageId and receivedAt', async () => {
    const written: unknown[] = []
    const sender = Archive.create(parseArchiveSettings({ url: `file://${folder.path}/archive` }, PATH), {
      source: 'web',
      relayId: 'r1',
      onFile: (file) => written.push(file),
    })
    expect(sender.targets).toEqual([`file://${folder.path}/archive`])
    expect(sender.batching).toEqual({ maxMessages: 100_000, maxWaitMs: 300_000 })
    const batch = [
      outbound(7, '2026-03-01T07:59:59.500Z'),
      outbound(8, '2026-03-01T08:00:00.000Z'),
      outbound(9, '2026-03-01T07:10:00.000Z'),
    ]
    const outcomes = await sender.sendBatch(batch)

    const first = 'source=web/date=2026-03-01/hour=07/r1-7-9.ndjson.gz'
    const second = 'source=web/date=2026-03-01/hour=08/r1-8-8.ndjson.gz'
    expect(outcomes).toEqual([
      { kind: 'delivered', target: sender.targets[0], detail: { file: first, messages: 2, bytes: expect.any(Number) } },
      {
        kind: 'delivered',
        target: sender.targets[0],
        detail: { file: second, messages: 1, bytes: expect.any(Number) },
      },
      // The file's size and count go with its first message only: a metrics reader counts it once.
      { kind: 'delivered', target: sender.targets[0], detail: { file: first } },
    ])
    const root = join(folder.path, 'archive')
    // Nothing but the files and their hidden meta: no temporary file is left behind.
    expect(allFiles(root).filter((name) => !name.split('/').at(-1)!.startsWith('.'))).toEqual([first, second])
    expect(allFiles(root).filter((name) => name.endsWith('.tmp'))).toEqual([])
    const lines = gunzipSync(await fs.readFile(join(root, first)))
      .toString()
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(lines).toEqual([
      { ...batch[0]!.message, receivedAt: batch[0]!.receivedAt },
      { ...batch[2]!.message, receivedAt: batch[2]!.receivedAt },
    ])
    expect(written).toEqual([
      expect.objectContaining({ source: 'web', key: first, messages: 2, first: batch[2]!.receivedAt }),
      expect.objectContaining({ source: 'web', key: second, messages: 1 }),
    ])
    await sender.close()
  })

  it("lists a window's files and reads back its messages, for both formats", async () => {
    for (const format of ['ndjson', 'parquet']) {
      const sender = create(format)
      await sender.sendBatch([outbound(1, '2026-02-28T23:30:00.000Z'), outbound(2, '2026-03-01T00:30:00.000Z')])
      await sender.sendBatch([outbound(3, '2026-03-01T00:40:00.000Z', { text: 'line\nbreak \u2028 "q"' })])
      await sender.sendBatch([outbound(4, '2026-03-01T05:00:00.000Z')])
      const store = new FileStore(join(folder.path, 'archive'))
      const since = Date.parse('2026-03-01T00:00:00.000Z')
      const until = Date.parse('2026-03-01T01:00:00.000Z')
      const ext = format === 'ndjson' ? 'ndjson.gz' : 'parquet'
      const { files } = await listArchive(store, '', { source: 'web', since, until })
      expect(files).toEqual([
        {
          key: `source=web/date=2026-03-01/hour=00/r1-2-2.${ext}`,
          messages: 1,
          bytes: expect.any(Number),
          first: '2026-03-01T00:30:00.000Z',
          last: '2026-03-01T00:30:00.000Z',
        },
        expect.objectContaining({ key: `source=web/date=2026-03-01/hour=00/r1-3-3.${ext}`, messages: 1 }),
      ])
      const { size } = await fs.stat(join(folder.path, 'archive', files[0]!.key))
      expect(files[0]!.bytes).toBe(size)
      const read = []
      for await (const record of readArchive(store, '', { source: 'web', since, until })) read.push(record)
      expect(read.map((record) => record.messageId)).toEqual(['m-2', 'm-3'])
      expect(read[1]!['text']).toBe('line\nbreak \u2028 "q"')
      await fs.rm(join(folder.path, 'archive'), { recursive: true })
    }
  })

  it('lists a file without its meta by reading it, and skips a message archived twice', async () => {
    const sender = create()
    await sender.sendBatch([outbound(1, '2026-03-01T00:10:00.000Z'), outbound(2, '2026-03-01T00:20:00.000Z')])
    // A relay killed after its file, before recording it: the deliveries go into a later file.
    const again = Archive.create(parseArchiveSettings({ url: `file://${folder.path}/archive` }, PATH), {
      source: 'web',
      relayId: 'r2',
    })
    await again.sendBatch([outbound(2, '2026-03-01T00:20:00.000Z'), outbound(5, '2026-03-01T00:50:00.000Z')])
    const hour = join(folder.path, 'archive', 'source=web/date=2026-03-01/hour=00')
    await fs.rm(join(hour, '.r1-1-2.ndjson.gz.meta.json'))
    const store = new FileStore(join(folder.path, 'archive'))
    const window = { source: 'web', since: 0, until: Date.parse('2026-03-02T00:00:00Z') }
    const { files } = await listArchive(store, '', window)
    expect(files.map((file) => [file.key.split('/').at(-1), file.messages, file.first, file.last])).toEqual([
      ['r1-1-2.ndjson.gz', 2, '2026-03-01T00:10:00.000Z', '2026-03-01T00:20:00.000Z'],
      ['r2-2-5.ndjson.gz', 2, '2026-03-01T00:20:00.000Z', '2026-03-01T00:50:00.000Z'],
    ])
    const ids = []
    for await (const record of readArchive(store, '', window)) ids.push(record.messageId)
    expect(ids).toEqual(['m-1', 'm-2', 'm-5'])
  })

  it('fails a full disk with its reason, retryably, and leaves no half file (simulated ENOSPC)', async () => {
    const root = join(folder.path, 'archive')
    // The disk fills after the meta file: the file itself cannot be written.
    let opened = 0
    const full: typeof fs.open = async (path, flags) => {
      const handle = await fs.open(path, flags)
      if (++opened < 2) return handle
      return Object.assign(Object.create(handle), {
        writeFile: async (body: Uint8Array) => {
          await handle.write(Buffer.from(body).subarray(0, 10))
          throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })
        },
        sync: () => handle.sync(),
        close: () => handle.close(),
      })
    }
    const sender = new ArchiveSender(parseArchiveSettings({ url: `file://${root}` }, PATH), {
      source: 'web',
      relayId: 'r1',
      prefix: '',
      store: new FileStore(root, { fs: { open: full } }),
    })
    const outcomes = await sender.sendBatch([outbound(1, '2026-03-01T00:10:00.000Z')])
    expect(outcomes).toEqual([
      {
        kind: 'failed',
        retryable: true,
        target: `file://${root}`,
        error: expect.stringMatching(/source=web\/date=2026-03-01\/hour=00\/r1-1-1\.ndjson\.gz: disk full \(ENOSPC\)/),
      },
    ])
    expect(allFiles(root).filter((name) => !name.split('/').at(-1)!.startsWith('.r1-1-1.ndjson.gz.meta'))).toEqual([])
  })

  it.skipIf(process.getuid?.() !== 0)(
    'fails a real full disk (a 64 KB tmpfs) and writes once room is made',
    async () => {
      const mount = join(folder.path, 'tiny')
      mkdirSync(mount)
      try {
        execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', mount], { stdio: 'ignore' })
      } catch {
        // Not allowed here (a container without CAP_SYS_ADMIN): the simulated full disk above stands.
        return
      }
      try {
        const sender = create('ndjson', mount)
        const big = (id: number) => outbound(id, '2026-03-01T00:10:00.000Z', { blob: randomText(40_000) })
        expect(await sender.sendBatch([big(1)])).toEqual([expect.objectContaining({ kind: 'delivered' })])
        const [outcome] = await sender.sendBatch([big(2)])
        expect(outcome).toMatchObject({ kind: 'failed', retryable: true, error: expect.stringMatching(/disk full/) })
        const hour = join(mount, 'archive/source=web/date=2026-03-01/hour=00')
        expect(readdirSync(hour).filter((name) => name.endsWith('.ndjson.gz'))).toEqual(['r1-1-1.ndjson.gz'])
        expect(readdirSync(hour).filter((name) => name.endsWith('.tmp'))).toEqual([])
        rmSync(join(hour, 'r1-1-1.ndjson.gz'))
        expect(await sender.sendBatch([big(2)])).toEqual([expect.objectContaining({ kind: 'delivered' })])
      } finally {
        execFileSync('umount', [mount])
      }
    },
  )
})

/** Text gzip cannot shrink much: a full disk needs real bytes. */
function randomText(length: number): string {
  return Buffer.from(Array.from({ length }, () => Math.floor(Math.random() * 256)))
    .toString('base64')
    .slice(0, length)
}
