import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Relay } from '../../../src/relay/index'
import { startRelay as startRelayProcess } from '../../../src/relay/relay'
import { newDatabase, STORE_KINDS, type StoreKind } from '../../support/stores'
import { ADMIN_TOKEN, adminGet, post, type Receiver, startReceiver, track, waitFor, WRITE_KEY } from '../helpers'
import { api } from '../sources/api-client'

// A suppression made through one relay reaches another on the same store within 5 s
// (docs/privacy.md): on PostgreSQL by notification, on a SQLite file shared as `--workers`
// processes share it by the poll.
const WITHIN_MS = 5000

describe.each(STORE_KINDS)('a suppression across relays on one store (%s)', (kind: StoreKind) => {
  let dir: string
  let database: string
  let receiver: Receiver
  let relays: Relay[] = []

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tracklet-privacy-'))
    database = await newDatabase(kind, dir)
    receiver = await startReceiver()
  })
  afterEach(async () => {
    for (const relay of relays) await relay.close()
    relays = []
    await receiver.close()
    rmSync(dir, { recursive: true, force: true })
  })

  const start = async () => {
    const options = {
      port: 0,
      database,
      adminToken: ADMIN_TOKEN,
      allowPrivateNetworks: true,
      sources: [
        { name: 'web', writeKey: WRITE_KEY, destinations: { Webhooks: { webhooks: [{ url: receiver.url }] } } },
      ],
    }
    const relay = await startRelayProcess(options, { sharedByProcesses: kind === 'sqlite', warningsLogged: true })
    relays.push(relay)
    return relay
  }

  let sent = 0
  // Whether `relay` stores a new message of `userId` now (its delivery is written before the answer).
  const stores = async (relay: Relay, userId: string): Promise<boolean> => {
    const messageId = `probe-${sent++}`
    expect((await post(`${relay.url}/v1/batch`, { batch: [track({ userId, messageId })] })).status).toBe(200)
    return (await adminGet(`${relay.url}/v1/deliveries?messageId=${messageId}`)).body.deliveries.length === 1
  }

  it('is applied by the other relay within 5 s, and so is its lift', async () => {
    const [a, b] = [await start(), await start()]
    expect(await stores(b, 'u-shared')).toBe(true)
    expect((await api(a.url, 'POST', '/v1/suppressions', { userIds: ['u-shared'] })).status).toBe(200)
    expect(await stores(a, 'u-shared')).toBe(false)
    await waitFor(async () => ((await stores(b, 'u-shared')) ? undefined : true), 'relay B to suppress', WITHIN_MS)
    expect(await stores(b, 'someone-else')).toBe(true)

    expect((await api(a.url, 'DELETE', '/v1/suppressions/u-shared')).status).toBe(200)
    expect(await stores(a, 'u-shared')).toBe(true)
    await waitFor(async () => ((await stores(b, 'u-shared')) ? true : undefined), 'relay B to lift it', WITHIN_MS)
  })
})
