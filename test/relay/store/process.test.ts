import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { useCli } from '../../support/cli-process'
import { ADMIN_TOKEN, adminGet, post, type Receiver, startReceiver, track, WRITE_KEY, waitFor } from '../helpers'

const dir = mkdtempSync(join(tmpdir(), 'tracklet-process-'))
let receiver: Receiver | undefined

afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
})
afterEach(async () => {
  await receiver?.close()
  receiver = undefined
})
const cli = useCli()

function writeConfig(name: string, receiverUrl: string): string {
  const path = join(dir, `${name}.json`)
  writeFileSync(
    path,
    JSON.stringify({
      port: 0,
      database: `${name}.db`,
      adminToken: ADMIN_TOKEN,
      allowPrivateNetworks: true,
      sources: [{ name: 'web', writeKey: WRITE_KEY, destinations: { Webhooks: { webhooks: [{ url: receiverUrl }] } } }],
    }),
  )
  return path
}

describe('tracklet relay --config', () => {
  it('prints the URL, serves, and exits 0 on SIGTERM', async () => {
    receiver = await startReceiver()
    const relay = await cli.startRelay(['--config', writeConfig('cli', receiver.url)])
    expect((await post(`${relay.url}/v1/track`, { userId: 'u', event: 'E' })).status).toBe(200)
    await waitFor(() => receiver!.received[0])
    relay.child.kill('SIGTERM')
    expect(await relay.exited).toBe(0)
    expect(relay.output()).toMatch(/SIGTERM received, closing/)
  })

  it('exits 1 naming the field of an invalid config, and 2 without --config', async () => {
    const path = join(dir, 'invalid.json')
    writeFileSync(path, JSON.stringify({ sources: [{ name: 'web', writeKey: '' }] }))
    const invalid = cli.run(['relay', '--config', path])
    expect(await invalid.exited).toBe(1)
    expect(invalid.output()).toContain('sources[0].writeKey: must be a non-empty string')

    const missing = cli.run(['relay'])
    expect(await missing.exited).toBe(2)
    expect(missing.output()).toMatch(/--config is required/)
  })
})

describe('durability', () => {
  it('delivers, after a SIGKILL and a restart on the same file, what it had acknowledged', async () => {
    receiver = await startReceiver()
    receiver.respond(() => {}) // holds every request: nothing gets delivered before the kill
    const config = writeConfig('durable', receiver.url)

    const first = await cli.startRelay(['--config', config])
    expect((await post(`${first.url}/v1/batch`, { batch: [track({ messageId: 'in-flight' })] })).status).toBe(200)
    await waitFor(() => receiver!.received.find((r) => r.body['messageId'] === 'in-flight'))
    // Acknowledged, then killed at once: no chance to deliver, nor to shut down cleanly.
    expect((await post(`${first.url}/v1/batch`, { batch: [track({ messageId: 'acknowledged' })] })).status).toBe(200)
    first.child.kill('SIGKILL')
    await first.exited

    receiver.respond((_req, res) => res.writeHead(200).end())
    const second = await cli.startRelay(['--config', config])
    const delivered = await waitFor(async () => {
      const { body } = await adminGet(`${second.url}/v1/deliveries?status=delivered`)
      return body.deliveries.length === 2 ? body.deliveries : undefined
    }, 'both deliveries')
    expect(delivered.map((d: any) => d.messageId).sort()).toEqual(['acknowledged', 'in-flight'])
    // At-least-once: the message in flight at the kill reached the receiver again, with its id.
    expect(receiver.received.filter((r) => r.body['messageId'] === 'in-flight').length).toBeGreaterThanOrEqual(2)
    second.child.kill('SIGTERM')
    expect(await second.exited).toBe(0)
  })
})
