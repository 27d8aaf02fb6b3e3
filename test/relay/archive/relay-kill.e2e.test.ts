import { existsSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { FileStore } from '../../../src/relay/destinations/archive/file-store'
import { readArchive } from '../../../src/relay/destinations/archive/reader'
import { useCli } from '../../support/cli-process'
import { ADMIN_TOKEN, basic, post, track, WRITE_KEY, waitFor } from '../helpers'
import { tempFolder } from './support'

describe('a relay killed with SIGKILL mid-file under load', () => {
  let folder: Awaited<ReturnType<typeof tempFolder>>
  beforeEach(async () => {
    folder = await tempFolder()
  })
  afterEach(() => folder.remove())
  const cli = useCli()

  it('loses no acknowledged message: the restarted relay archives what was pending', async () => {
    const root = join(folder.path, 'archive')
    const config = join(folder.path, 'relay.json')
    writeFileSync(
      config,
      JSON.stringify({
        port: 0,
        database: join(folder.path, 'relay.db'),
        adminToken: ADMIN_TOKEN,
        // A dead relay's leases run out soon, so the restarted one takes its deliveries in the test's time.
        leaseTimeout: 1000,
        sources: [
          {
            name: 'web',
            writeKey: WRITE_KEY,
            destinations: { Archive: { url: `file://${root}`, maxFileMessages: 200, maxFileSeconds: 1 } },
          },
        ],
      }),
    )
    const first = await cli.startRelay(['--config', config])
    const acknowledged: string[] = []
    let stop = false
    let sent = 0
    const load = (async () => {
      while (!stop) {
        const batch = Array.from({ length: 50 }, () => track({ messageId: `k-${sent++}` }))
        const answer = await post(`${first.url}/v1/batch`, { batch }, { authorization: basic(WRITE_KEY) }).catch(
          () => undefined,
        )
        if (answer?.status === 200) acknowledged.push(...batch.map((m) => String(m['messageId'])))
      }
    })()
    // Files are being written and messages still coming in: the kill lands mid-file.
    await waitFor(() => (existsSync(root) && countFiles(root) >= 2) || undefined, 'two archive files', 20_000)
    first.child.kill('SIGKILL')
    stop = true
    await load
    await first.exited
    expect(acknowledged.length).toBeGreaterThan(0)

    const second = await cli.startRelay(['--config', config])
    const window = { source: 'web', since: Date.now() - 3_600_000, until: Date.now() + 60_000 }
    const missing = await waitFor(
      async () => {
        const ids = new Set<string>()
        for await (const record of readArchive(new FileStore(root), '', window)) ids.add(record.messageId)
        const left = acknowledged.filter((id) => !ids.has(id))
        return left.length === 0 ? left : undefined
      },
      'every acknowledged message archived',
      30_000,
    )
    expect(missing).toEqual([])
    second.child.kill('SIGTERM')
    await second.exited
  }, 60_000)
})

function countFiles(root: string): number {
  return (readdirSync(root, { recursive: true }) as string[]).filter((name) => name.endsWith('.ndjson.gz')).length
}
