import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import type { ServerResponse } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { listeningUrl, startTracklet, stopAll, useCli } from '../../support/cli-process'
import { newDatabase, STORE_KINDS, type StoreKind } from '../../support/stores'
import { waitFor } from '../../support/wait-for'
import { ADMIN_TOKEN, adminGet, post, track, WRITE_KEY } from '../helpers'
import { type CountingReceiver, countingReceiver } from './receiver'

// `tracklet relay --workers 2` on one store: the two worker processes hold one URL's maxInFlight
// together (docs/delivery-controls.md).

const cli = useCli()
const dir = mkdtempSync(join(tmpdir(), 'tracklet-limits-workers-'))
let receiver: CountingReceiver | undefined
let answering: NodeJS.Timeout | undefined

afterEach(async () => {
  clearInterval(answering)
  await stopAll()
  await receiver?.close()
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe.each(STORE_KINDS)('tracklet relay --workers 2 under a URL’s maxInFlight (%s)', (kind: StoreKind) => {
  it('holds the limit for both workers together', async () => {
    receiver = await countingReceiver()
    const held: ServerResponse[] = []
    receiver.respond((_req, res) => void held.push(res))
    const config = join(dir, `${kind}.json`)
    writeFileSync(
      config,
      JSON.stringify({
        port: 0,
        database: await newDatabase(kind, dir, `${kind}.db`),
        adminToken: ADMIN_TOKEN,
        allowPrivateNetworks: true,
        concurrency: 16,
        sources: [
          {
            name: 'web',
            writeKey: WRITE_KEY,
            destinations: { Webhooks: { webhooks: [{ url: receiver.url, maxInFlight: 3 }] } },
          },
        ],
      }),
    )
    const run = startTracklet(cli.path, ['relay', '--config', config, '--workers', '2'])
    const url = await listeningUrl(run)
    // Several requests, so both workers take some (the kernel spreads connections between them).
    for (let i = 0; i < 6; i++) {
      await post(`${url}/v1/batch`, { batch: Array.from({ length: 5 }, (_, j) => track({ messageId: `m${i}-${j}` })) })
    }
    await waitFor(() => (receiver!.inFlight === 3 ? true : undefined), 'three requests in flight', 30_000)
    answering = setInterval(() => {
      for (const res of held.splice(0)) res.writeHead(200).end()
    }, 30)
    await waitFor(
      async () => {
        const { body } = await adminGet(`${url}/v1/deliveries?status=delivered&limit=100`)
        return body.deliveries?.length === 30 ? true : undefined
      },
      'all thirty delivered',
      60_000,
    )
    expect(receiver.mostInFlight).toBe(3)
  })
})
