import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Relay, RelayOptions } from '../../../src/relay/index'
import { startRelay as startRelayProcess } from '../../../src/relay/relay'
import { newDatabase, STORE_KINDS, type StoreKind } from '../../support/stores'
import { ADMIN_TOKEN, basic, post, type Receiver, startReceiver, track, waitFor } from '../helpers'
import { api, webhooksTo } from '../sources/api-client'

// A destination's function set through the admin API (docs/functions.md, "Through the admin API"):
// accepted as { code } only and compiled before it is stored, shown, audited, and applied on every
// relay on the store. On SQLite the second relay is a `--workers` process would be (only the poll
// carries a change across); on PostgreSQL, a relay of its own on one database.

const TAG =
  'function onTrack(event, settings) { event.properties = { ...event.properties, tag: settings.tag }; return event }'

const tagOf = (body: Record<string, unknown>) => (body['properties'] as Record<string, unknown> | undefined)?.['tag']

function withFunction(url: string, code: string, functionSettings: Record<string, unknown> = { tag: 'v1' }) {
  const body = webhooksTo(url) as { destinations: { Webhooks: Record<string, unknown> } }
  body.destinations.Webhooks['function'] = { code }
  body.destinations.Webhooks['functionSettings'] = functionSettings
  return body
}

describe.each(STORE_KINDS)('functions through the admin API (%s)', (kind: StoreKind) => {
  let dir: string
  let database: string
  let receiver: Receiver
  let relays: Relay[] = []

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tracklet-fnapi-'))
    database = await newDatabase(kind, dir)
    receiver = await startReceiver()
  })
  afterEach(async () => {
    for (const relay of relays) await relay.close()
    relays = []
    await receiver.close()
    rmSync(dir, { recursive: true, force: true })
  })

  const start = async (extra: Partial<RelayOptions> = {}) => {
    const options: RelayOptions = {
      ...{ port: 0, database, adminToken: ADMIN_TOKEN, allowPrivateNetworks: true, trustProxy: true, sources: [] },
      ...extra,
    }
    const relay = await startRelayProcess(options, { sharedByProcesses: kind === 'sqlite', warningsLogged: true })
    relays.push(relay)
    return relay
  }

  const send = async (relay: Relay, writeKey: string, message = track()) => {
    const answer = await post(`${relay.url}/v1/batch`, { batch: [message] }, { authorization: basic(writeKey) })
    expect(answer.status).toBe(200)
    return message['messageId'] as string
  }

  // Whether `relay` took `message` (another relay's new source reaches it within the poll). Each try
  // comes from an address of its own: waiting on a key not known yet must not trip the limiter of
  // failed keys (which would answer 429 to the address, whatever the key).
  let tries = 0
  const accepts = async (relay: Relay, writeKey: string, message = track()) => {
    const from = `10.${tries >> 16}.${(tries >> 8) & 255}.${tries++ & 255}`
    const headers = { authorization: basic(writeKey), 'x-forwarded-for': from }
    return (await post(`${relay.url}/v1/batch`, { batch: [message] }, headers)).status === 200
  }

  const receivedOf = (messageId: string) =>
    waitFor(() => receiver.received.find((r) => r.body['messageId'] === messageId)?.body, `message ${messageId}`)

  it('runs a function given as { code } from the answer of its PUT, shows it and audits it', async () => {
    const relay = await start()
    const created = await api(relay.url, 'PUT', '/v1/sources/shop', withFunction(receiver.url, TAG))
    expect(created.status).toBe(201)
    expect(created.body.destinations.Webhooks).toMatchObject({
      function: { code: TAG },
      functionSettings: { tag: 'v1' },
    })
    const writeKey = created.body.writeKey as string

    // Applied before the answer: the first message after it is reshaped.
    expect(
      (await receivedOf(await send(relay, writeKey, track({ properties: { plan: 'pro' } }))))['properties'],
    ).toEqual({
      plan: 'pro',
      tag: 'v1',
    })
    const shown = await api(relay.url, 'GET', '/v1/sources/shop')
    expect(shown.body.destinations.Webhooks).toMatchObject({ function: { code: TAG }, functionSettings: { tag: 'v1' } })

    // Its settings changed: the next delivery uses them.
    const replaced = await api(relay.url, 'PUT', '/v1/sources/shop', withFunction(receiver.url, TAG, { tag: 'v2' }))
    expect(replaced.status).toBe(200)
    expect((await receivedOf(await send(relay, writeKey)))['properties']).toEqual({ tag: 'v2' })
    const audit = await api(relay.url, 'GET', '/v1/audit')
    const [replace, create] = audit.body.entries as { action: string; changes: any }[]
    expect(create).toMatchObject({ action: 'source.created' })
    expect(create!.changes.after.destinations.Webhooks.function).toEqual({ code: TAG })
    expect(replace).toMatchObject({ action: 'source.replaced' })
    expect(replace!.changes.fields).toEqual([
      { path: 'destinations.Webhooks.functionSettings.tag', from: 'v1', to: 'v2' },
    ])

    // Removed through a PUT: the message goes as sent.
    expect((await api(relay.url, 'PUT', '/v1/sources/shop', webhooksTo(receiver.url))).status).toBe(200)
    expect(tagOf(await receivedOf(await send(relay, writeKey)))).toBeUndefined()
  })

  it('refuses { file } and code that does not compile with a 400 naming the path, storing nothing', async () => {
    const relay = await start()
    const file = await api(relay.url, 'PUT', '/v1/sources/shop', {
      destinations: { Webhooks: { webhooks: [{ url: receiver.url }], function: { file: 'scrub.js' } } },
    })
    expect(file.status).toBe(400)
    expect(file.body.error.problems).toEqual([
      { field: 'destinations.Webhooks.function.file', message: expect.stringContaining('{ "code": "…" }') },
    ])

    const broken = await api(
      relay.url,
      'PUT',
      '/v1/sources/shop',
      withFunction(receiver.url, 'function onTrack(e) { return e )'),
    )
    expect(broken.status).toBe(400)
    expect(broken.body.error.code).toBe('ERR_INVALID_SOURCE')
    expect(broken.body.error.problems).toEqual([
      {
        field: 'destinations.Webhooks.function.code',
        message: expect.stringMatching(/^does not compile: SyntaxError/),
      },
    ])
    expect((await api(relay.url, 'GET', '/v1/sources/shop')).status).toBe(404)
    expect((await api(relay.url, 'GET', '/v1/audit')).body.entries).toEqual([])

    // A replace with broken code keeps the source, and its function, as they were.
    const created = await api(relay.url, 'PUT', '/v1/sources/shop', withFunction(receiver.url, TAG))
    const again = await api(relay.url, 'PUT', '/v1/sources/shop', withFunction(receiver.url, 'onTrack = ('))
    expect(again.status).toBe(400)
    expect((await api(relay.url, 'GET', '/v1/sources/shop')).body.destinations.Webhooks.function).toEqual({ code: TAG })
    expect((await receivedOf(await send(relay, created.body.writeKey as string)))['properties']).toEqual({ tag: 'v1' })
  })

  it('refuses to start a relay whose limits the stored function does not load under, naming its source', async () => {
    const a = await start()
    // About 16 MB at load: within the default functionMemory (64 MB), not within 4 MB.
    const heavy = `const table = new Array(1e6).fill(1.5)\n${TAG}`
    expect((await api(a.url, 'PUT', '/v1/sources/shop', withFunction(receiver.url, heavy))).status).toBe(201)
    await expect(start({ functionMemory: 4 })).rejects.toMatchObject({
      code: 'ERR_RELAY_CONFIG',
      field: 'source "shop": destinations.Webhooks.function.code',
      message: expect.stringContaining('does not compile'),
    })
  })

  it('reshapes the deliveries another relay on the store makes, within 5 s of the PUT', async () => {
    const [a, b] = [await start(), await start()]
    const created = await api(a.url, 'PUT', '/v1/sources/shop', webhooksTo(receiver.url))
    const writeKey = created.body.writeKey as string
    expect((await api(a.url, 'PUT', '/v1/sources/shop', withFunction(receiver.url, TAG))).status).toBe(200)
    // Relay A stops: what is delivered from now on, relay B delivers.
    await a.close()
    relays = [b]
    let sent = 0
    const tagged = await waitFor(
      async () => {
        const message = track({ messageId: `m-b-${sent++}` })
        if (!(await accepts(b, writeKey, message))) return undefined
        return tagOf(await receivedOf(message['messageId'] as string))
      },
      'relay B to deliver through the function',
      5_000,
    )
    expect(tagged).toBe('v1')

    // Deleted on B: its function is gone with it; a source made again under that name has none.
    expect((await api(b.url, 'DELETE', '/v1/sources/shop')).status).toBe(204)
    const again = await api(b.url, 'PUT', '/v1/sources/shop', webhooksTo(receiver.url))
    const key = again.body.writeKey as string
    await waitFor(async () => ((await accepts(b, key)) ? true : undefined), 'relay B to take the new key')
    expect(tagOf(await receivedOf(await send(b, key)))).toBeUndefined()
  })
})
