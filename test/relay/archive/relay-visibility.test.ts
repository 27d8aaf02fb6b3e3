import { readdir, stat } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createRelay, type Relay } from '../../../src/relay/index'
import { PageClient } from '../console/page-client'
import { throwawayDatabase } from '../../support/stores'
import { ADMIN_TOKEN, adminGet, post, track, WRITE_KEY, waitFor } from '../helpers'
import { tempFolder } from './support'

// What an operator sees of an archive: files and bytes written, the lag, the last file on the
// endpoints view, and on each delivery the file that holds its message.

async function metrics(url: string): Promise<string> {
  const response = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
  return response.text()
}

function sample(text: string, name: string): number | undefined {
  const line = new RegExp(`^${name}\\{source="web"\\} (\\S+)$`, 'm').exec(text)
  return line === null ? undefined : Number(line[1])
}

async function filesUnder(root: string): Promise<{ key: string; bytes: number }[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true })
  // The archive's files, not the hidden notes kept beside them.
  const files = entries.filter((entry) => entry.isFile() && !entry.name.startsWith('.'))
  return Promise.all(
    files.map(async (entry) => {
      const path = join(entry.parentPath, entry.name)
      return { key: relative(root, path), bytes: (await stat(path)).size }
    }),
  )
}

describe('an archive as the operator sees it', () => {
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

  it('counts files and bytes, shows its lag while messages wait and its last file once written', async () => {
    const root = join(folder.path, 'archive')
    relay = await createRelay({
      port: 0,
      database: await throwawayDatabase('sqlite'),
      adminToken: ADMIN_TOKEN,
      logLevel: 'error',
      sources: [
        {
          name: 'web',
          writeKey: WRITE_KEY,
          // A file once 10 messages wait: the first 5 wait (an hour, were it not for the next 5).
          destinations: { Archive: { url: `file://${root}`, maxFileMessages: 10, maxFileSeconds: 3600 } },
        },
      ],
    })
    const { url } = relay
    const before = await metrics(url)
    expect(sample(before, 'tracklet_archive_files_total')).toBe(0)
    expect(sample(before, 'tracklet_archive_bytes_total')).toBe(0)
    expect(sample(before, 'tracklet_archive_lag_seconds')).toBe(0)

    const first = Array.from({ length: 5 }, (_, i) => track({ messageId: `w-${i}` }))
    expect((await post(`${url}/v1/batch`, { batch: first })).status).toBe(200)
    await waitFor(
      async () => ((sample(await metrics(url), 'tracklet_archive_lag_seconds') ?? 0) > 0 ? true : undefined),
      'a lag',
    )
    const { body: waiting } = await adminGet(`${url}/v1/endpoints`)
    expect(waiting.endpoints).toEqual([
      expect.objectContaining({ url: `file://${root}`, pending: 5, oldestPendingAt: expect.any(String) }),
    ])

    const second = Array.from({ length: 5 }, (_, i) => track({ messageId: `x-${i}` }))
    expect((await post(`${url}/v1/batch`, { batch: second })).status).toBe(200)
    const delivered = await waitFor(async () => {
      const { body } = await adminGet(`${url}/v1/deliveries?status=delivered`)
      return body.deliveries.length === 10 ? body.deliveries : undefined
    }, 'the file written')
    const files = await filesUnder(root)
    expect(files, JSON.stringify(files)).toHaveLength(1)
    const after = await metrics(url)
    expect(sample(after, 'tracklet_archive_files_total')).toBe(1)
    expect(sample(after, 'tracklet_archive_bytes_total')).toBe(files[0]!.bytes)
    expect(sample(after, 'tracklet_archive_lag_seconds')).toBe(0)

    // Every delivery says which file holds its message.
    for (const { id } of delivered as { id: number }[]) {
      const { body } = await adminGet(`${url}/v1/deliveries/${id}`)
      expect(body.attempts).toEqual([expect.objectContaining({ status: 200, responseBody: `file ${files[0]!.key}` })])
    }
    const { body } = await adminGet(`${url}/v1/endpoints`)
    expect(body.endpoints).toEqual([
      expect.objectContaining({
        pending: 0,
        destination: { last: { text: `file ${files[0]!.key}`, at: expect.any(String) } },
      }),
    ])
    expect(body.endpoints[0].oldestPendingAt).toBeUndefined()
    const page = new PageClient(url)
    await page.signIn()
    expect((await page.get('/ui/endpoints')).body).toContain(`last: file ${files[0]!.key}`)
  })
})
