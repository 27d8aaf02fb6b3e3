import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { useCli } from '../../support/cli-process'
import { startCountingReceiver, startIngestLoad } from '../../support/ingest-load'
import { freshPostgresDatabase, sql } from '../../support/postgres'
import { startTcpProxy } from '../../support/tcp-proxy'
import { ADMIN_TOKEN, basic, WRITE_KEY, waitFor } from '../helpers'

// A relay process under load whose PostgreSQL connections are all ended, again and again: by the
// server (pg_terminate_backend, as an operator or a failover does) and by the network (a TCP proxy
// that drops every connection). Each cut costs some requests a 503 and the relay a reconnect,
// never the process, and nothing it acknowledged is lost.

const dir = mkdtempSync(join(tmpdir(), 'tracklet-cuts-'))
const cleanups: (() => Promise<unknown>)[] = []
afterAll(() => rmSync(dir, { recursive: true, force: true }))
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})
const cli = useCli()

/** Ends every session the relay holds on `database`; returns their application names. */
async function endRelaySessions(database: string): Promise<string[]> {
  const rows = await sql<{ name: string }>(
    database,
    // In the select list, not the WHERE clause: PostgreSQL may test a WHERE condition on the
    // sessions before the database's name (which comes from a join), and end other files' sessions.
    `SELECT application_name AS name, pg_terminate_backend(pid) FROM pg_stat_activity
     WHERE datname = current_database() AND application_name LIKE 'tracklet-relay%'`,
  )
  return rows.map((row) => row.name)
}

describe('a relay whose PostgreSQL connections are cut under load', () => {
  it('lives, answers again, and delivers everything it acknowledged', async () => {
    const database = await freshPostgresDatabase()
    const proxy = await startTcpProxy(Number(new URL(database).port))
    cleanups.push(() => proxy.close())
    const viaProxy = new URL(database)
    viaProxy.port = String(proxy.port)
    const receiver = await startCountingReceiver()
    cleanups.push(() => receiver.close())
    const config = join(dir, 'relay.json')
    writeFileSync(
      config,
      JSON.stringify({
        port: 0,
        adminToken: ADMIN_TOKEN,
        allowPrivateNetworks: true,
        // Claims whose outcome could not be written come back soon.
        leaseTimeout: 2000,
        sources: [
          { name: 'web', writeKey: WRITE_KEY, destinations: { Webhooks: { webhooks: [{ url: receiver.url }] } } },
        ],
      }),
    )
    const relay = await cli.startRelay(['--config', config, '--database', viaProxy.toString()])
    const load = startIngestLoad(relay.url, basic(WRITE_KEY))
    cleanups.push(() => load.stop())
    const progress = async (what: string) => {
      const before = load.acknowledged.size
      await waitFor(() => (load.acknowledged.size >= before + 100 ? true : undefined), what, 30_000)
    }
    await progress('the first acknowledged messages')

    // Ingest's transactions, the worker's claims and outcomes, the LISTEN connection: all ended.
    const ended = new Set<string>()
    for (let round = 0; round < 5; round++) {
      for (const name of await endRelaySessions(database)) ended.add(name)
      await progress(`ingest to go on after the sessions were ended (round ${round})`)
    }
    expect([...ended].sort()).toEqual(['tracklet-relay', 'tracklet-relay-notifications'])
    // The network between them drops every connection, and refuses new ones for a moment.
    for (let round = 0; round < 3; round++) {
      await proxy.cut()
      await proxy.restore()
      await progress(`ingest to go on after the connections were cut (round ${round})`)
    }
    await load.stop()

    expect(relay.child.exitCode).toBeNull()
    expect(relay.output()).not.toMatch(/unhandled|uncaught/i)
    const missing = () => [...load.acknowledged].filter((id) => !receiver.sent.has(id))
    await waitFor(() => (missing().length === 0 ? true : undefined), 'every acknowledged message to arrive', 60_000)
    const health = await fetch(`${relay.url}/healthz`)
    expect(health.status).toBe(200)
  }, 120_000)
})
