import { fork } from 'node:child_process'
import { once } from 'node:events'
import { readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { FileStore } from '../../../src/relay/destinations/archive/file-store'
import { readArchive } from '../../../src/relay/destinations/archive/reader'
import { listArchive } from '../../../src/relay/destinations/archive/listing'
import { bundleArchive, tempFolder } from './support'

describe('a writer killed with SIGKILL mid-file', () => {
  let folder: Awaited<ReturnType<typeof tempFolder>>
  let bundle: string
  beforeEach(async () => {
    folder = await tempFolder()
    bundle = await bundleArchive()
  })
  afterEach(async () => {
    rmSync(bundle, { force: true })
    await folder.remove()
  })

  it('leaves every acknowledged file whole and no visible half file', async () => {
    const root = join(folder.path, 'archive')
    const script = fileURLToPath(new URL('kill-writer.mjs', import.meta.url))
    const child = fork(script, [bundle, root], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    const acknowledged: { first: number; last: number; key: string }[] = []
    await new Promise<void>((resolve) => {
      child.on('message', (file: { first: number; last: number; key: string }) => {
        acknowledged.push(file)
        // The writer starts its next file at once: the kill lands while it is being written.
        if (acknowledged.length === 3) resolve()
      })
    })
    child.kill('SIGKILL')
    await once(child, 'exit')

    const store = new FileStore(root)
    const { files } = await listArchive(store, '', { source: 'web', since: 0, until: Date.now() + 60_000 })
    expect(files.length).toBeGreaterThanOrEqual(3)
    const keys = files.map((file) => file.key)
    for (const file of acknowledged) expect(keys).toContain(file.key)
    // Every visible file reads whole: 5,000 messages each, and every acknowledged message is there.
    for (const file of files) expect(file.messages).toBe(5000)
    const ids = new Set<string>()
    const window = { source: 'web', since: 0, until: Date.now() + 60_000 }
    for await (const record of readArchive(store, '', window)) ids.add(record.messageId)
    for (const { first, last } of acknowledged) {
      for (let id = first; id <= last; id++) expect(ids.has(`m-${id}`)).toBe(true)
    }
    expect(ids.size).toBe(files.length * 5000)
    // What the kill interrupted, if anything, is hidden: a name that starts with "." and ends in .tmp.
    const hour = join(root, files[0]!.key.split('/').slice(0, -1).join('/'))
    const hidden = readdirSync(hour).filter((name) => name.startsWith('.') && !name.endsWith('.meta.json'))
    for (const name of hidden) expect(name).toMatch(/^\..*\.tmp$/)
  })
})
