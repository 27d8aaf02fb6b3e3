import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Relay, RelayOptions } from '../../../src/relay/index'
import { startRelay as startRelayProcess } from '../../../src/relay/relay'
import { sql } from '../../support/postgres'
import { newDatabase, STORE_KINDS, type StoreKind } from '../../support/stores'
import { ADMIN_TOKEN, basic, post, type Receiver, startReceiver, track, waitFor } from '../helpers'
import { PageClient } from '../console/page-client'
import { api, newSecretsKey, webhooksTo } from './api-client'

const SHARED_SECRET = 'shared-secret-at-rest-5a4b3c2d'
const HEADER_KEY = 'header-value-at-rest-1f2e3d4c'
const GIVEN_KEY = 'given-write-key-at-rest-9z8y'

// Two relays on one store: on SQLite as two `--workers` processes would be (each its own
// in-process notification channel, so only the poll carries a change across), on PostgreSQL as two
// relays on one database.
function startOn(kind: StoreKind, database: string, receiverUrl: string, extra: Partial<RelayOptions> = {}) {
  const options: RelayOptions = {
    port: 0,
    database,
    adminToken: ADMIN_TOKEN,
    allowPrivateNetworks: true,
    // Each try below comes from an address of its own: waiting on a refused key must not trip the
    // limiter of failed keys (which would answer 429 to the address, whatever the key).
    trustProxy: true,
    sources: [
      { name: 'web', writeKey: 'wk-web-shared', destinations: { Webhooks: { webhooks: [{ url: receiverUrl }] } } },
    ],
    ...extra,
  }
  return startRelayProcess(options, { sharedByProcesses: kind === 'sqlite', warningsLogged: true })
}

let tries = 0

async function accepts(relay: Relay, writeKey: string): Promise<number> {
  const from = `10.${tries >> 16}.${(tries >> 8) & 255}.${tries++ & 255}`
  const answer = await post(
    `${relay.url}/v1/batch`,
    { batch: [track()] },
    { authorization: basic(writeKey), 'x-forwarded-for': from },
  )
  return answer.status
}

describe.each(STORE_KINDS)('relays sharing one store (%s)', (kind) => {
  let dir: string
  let database: string
  let receiver: Receiver
  let relays: Relay[] = []
  const secretsKey = newSecretsKey()

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tracklet-sources-'))
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
    const relay = await startOn(kind, database, receiver.url, { secretsKey, ...extra })
    relays.push(relay)
    return relay
  }

  it('applies a change made through one on the other, and refuses a rotated-out key on both', async () => {
    const [a, b] = [await start(), await start()]
    const created = await api(a.url, 'PUT', '/v1/sources/shop', webhooksTo(receiver.url))
    const first = created.body.writeKey as string
    await waitFor(
      async () => ((await accepts(b, first)) === 200 ? true : undefined),
      'the other relay to accept the key',
    )

    const added = await api(b.url, 'POST', '/v1/sources/shop/write-keys')
    const listed = await api(b.url, 'GET', '/v1/sources/shop')
    const old = listed.body.writeKeys.find((k: any) => k.id !== added.body.id)
    expect((await api(b.url, 'DELETE', `/v1/sources/shop/write-keys/${old.id}`)).status).toBe(204)
    for (const relay of [a, b]) {
      await waitFor(async () => ((await accepts(relay, first)) === 401 ? true : undefined), 'the old key refused')
      expect(await accepts(relay, added.body.writeKey)).toBe(200)
    }

    await api(b.url, 'PUT', '/v1/sources/shop', { ...webhooksTo(receiver.url), enabled: false })
    await waitFor(
      async () => ((await accepts(a, added.body.writeKey)) === 403 ? true : undefined),
      'disabled on the other',
    )
  })

  it('keeps no write key and no secret in clear in any table', async () => {
    const relay = await start()
    const webhooks = [{ url: receiver.url, headers: { 'X-Key': HEADER_KEY } }]
    const body = { destinations: { Webhooks: { webhooks, sharedSecret: SHARED_SECRET } }, writeKey: GIVEN_KEY }
    expect((await api(relay.url, 'PUT', '/v1/sources/shop', body)).status).toBe(201)
    const generated = (await api(relay.url, 'POST', '/v1/sources/shop/write-keys')).body.writeKey as string
    expect(await accepts(relay, GIVEN_KEY)).toBe(200)
    await waitFor(() => receiver.received[0])
    const everything = await dumpEveryTable(kind, database)
    expect(everything).toContain('api_sources') // the dump did read the tables
    for (const secret of [SHARED_SECRET, HEADER_KEY, GIVEN_KEY, generated]) expect(everything).not.toContain(secret)
  })

  it('serves every other source when one stored cannot be decrypted, naming it on /healthz and the page', async () => {
    const relay = await start()
    await api(relay.url, 'PUT', '/v1/sources/shop', webhooksTo(receiver.url, { sharedSecret: SHARED_SECRET }))
    const plain = await api(relay.url, 'PUT', '/v1/sources/plain', webhooksTo(receiver.url))
    await relay.close()
    relays = []
    // A key that cannot open the secret, then none at all: the relay starts either way.
    for (const key of [newSecretsKey(), undefined]) {
      const other = await start({ secretsKey: key } as Partial<RelayOptions>)
      expect(await accepts(other, 'wk-web-shared')).toBe(200)
      expect(await accepts(other, plain.body.writeKey)).toBe(200)
      const health = await fetch(`${other.url}/healthz`)
      expect(health.status).toBe(200)
      expect(await health.json()).toEqual({ ok: true, unreadableSources: [{ name: 'shop' }] })
      const asAdmin = await fetch(`${other.url}/healthz`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
      const [unreadable] = ((await asAdmin.json()) as any).unreadableSources
      expect(unreadable).toEqual({ name: 'shop', error: expect.stringContaining('cannot decrypt') })
      expect(JSON.stringify(unreadable)).not.toContain(SHARED_SECRET)
      const page = new PageClient(other.url)
      await page.signIn()
      expect((await page.get('/ui/sources')).body).toContain('not served (cannot decrypt): shop')
      await other.close()
      relays = []
    }
    // While rotating: the new key first, the old one after it.
    const rotating = await start({ secretsKey: `${newSecretsKey()},${secretsKey}` })
    expect((await api(rotating.url, 'GET', '/v1/sources/shop')).body.destinations.Webhooks.sharedSecret).toBe('***')
    expect(await (await fetch(`${rotating.url}/healthz`)).json()).toEqual({ ok: true })
  })

  it("refuses to start when a file source has an API source's name, naming both", async () => {
    const relay = await start()
    await api(relay.url, 'PUT', '/v1/sources/shop', webhooksTo(receiver.url))
    await relay.close()
    relays = []
    const sources = [{ name: 'shop', writeKey: 'wk-file-shop', destinations: {} }]
    await expect(start({ sources })).rejects.toMatchObject({
      code: 'ERR_RELAY_CONFIG',
      message: expect.stringMatching(/sources\[0\].*admin API.*"shop"/),
    })
  })
})

describe('a relay whose LISTEN connection was cut (postgres)', () => {
  it('still applies a change made through another relay, by polling', async () => {
    const database = await newDatabase('postgres', '')
    const receiver = await startReceiver()
    const [a, b] = [
      await startOn('postgres', database, receiver.url),
      await startOn('postgres', database, receiver.url),
    ]
    try {
      // Both listen once started; cut every notification connection on the database.
      const listening = "application_name = 'tracklet-relay-notifications'"
      await waitFor(async () =>
        (await sql(database, `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND ${listening}`))
          .length === 2
          ? true
          : undefined,
      )
      // Every notification connection is cut as soon as it is made (the channel reconnects by
      // itself), from before the change until b has it: b can only have learnt of it by polling.
      let cutting = true
      let cuts = 0
      const cutter = (async () => {
        while (cutting) {
          cuts += (
            await sql(
              database,
              `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND ${listening}`,
            )
          ).length
          await new Promise((resolve) => setTimeout(resolve, 20))
        }
      })()
      try {
        await waitFor(async () => (cuts >= 2 ? true : undefined), 'both connections cut')
        const created = await api(a.url, 'PUT', '/v1/sources/shop', webhooksTo(receiver.url))
        expect(created.status).toBe(201)
        await waitFor(
          async () => ((await accepts(b, created.body.writeKey)) === 200 ? true : undefined),
          'b to apply it',
        )
      } finally {
        cutting = false
        await cutter
      }
    } finally {
      await a.close()
      await b.close()
      await receiver.close()
    }
  })
})

async function dumpEveryTable(kind: StoreKind, database: string): Promise<string> {
  if (kind === 'sqlite') {
    const db = new Database(database, { readonly: true })
    try {
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[]
      return tables
        .map((table) => `${table}: ${JSON.stringify(db.prepare(`SELECT * FROM "${table}"`).all())}`)
        .join('\n')
    } finally {
      db.close()
    }
  }
  const tables = await sql<{ tablename: string }>(
    database,
    "SELECT tablename FROM pg_tables WHERE schemaname = 'public'",
  )
  const dumps = await Promise.all(
    tables.map(
      async ({ tablename }) => `${tablename}: ${JSON.stringify(await sql(database, `SELECT * FROM "${tablename}"`))}`,
    ),
  )
  return dumps.join('\n')
}
