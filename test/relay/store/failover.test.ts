import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { openPool, transaction } from '../../../src/relay/kit/postgres/pool'
import { useCli } from '../../support/cli-process'
import { startCountingReceiver, startIngestLoad } from '../../support/ingest-load'
import { type PostgresPair, startPostgresPair } from '../../support/postgres-pair.mjs'
import { ADMIN_TOKEN, basic, WRITE_KEY, waitFor } from '../helpers'

// A PostgreSQL primary with a streaming standby, started here; a relay process on the two-host URL
// (target_session_attrs=read-write) under load; kill -9 of the primary, then `pg_ctl promote` of
// the standby, as pg_auto_failover or Patroni would.

const dir = mkdtempSync(join(tmpdir(), 'tracklet-failover-'))
const cleanups: (() => Promise<unknown>)[] = []
afterAll(() => rmSync(dir, { recursive: true, force: true }))
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})
const cli = useCli()

async function startPair(synchronous: boolean): Promise<PostgresPair> {
  const pair = await startPostgresPair({ synchronous })
  cleanups.push(() => pair.stop())
  return pair
}

describe('a relay on a primary and a synchronous standby', () => {
  it('follows a kill -9 of the primary and a promotion, losing nothing it acknowledged', async () => {
    const pair = await startPair(true)
    const database = await pair.createDatabase('tracklet')
    const receiver = await startCountingReceiver()
    cleanups.push(() => receiver.close())
    const config = join(dir, 'relay.json')
    writeFileSync(
      config,
      JSON.stringify({
        port: 0,
        adminToken: ADMIN_TOKEN,
        allowPrivateNetworks: true,
        leaseTimeout: 2000,
        sources: [
          { name: 'web', writeKey: WRITE_KEY, destinations: { Webhooks: { webhooks: [{ url: receiver.url }] } } },
        ],
      }),
    )
    const relay = await cli.startRelay(['--config', config, '--database', database])
    // A request the relay's process could not answer fails the test with the process's output; one
    // whose connection was cut (the load's keep-alive sockets come and go) is asked again.
    const healthz = async (): Promise<Response | undefined> => {
      try {
        return await fetch(`${relay.url}/healthz`)
      } catch (error) {
        if (relay.child.exitCode !== null || relay.child.signalCode !== null) {
          throw new Error(`the relay ended: ${relay.output()}`, { cause: error })
        }
        return undefined
      }
    }
    const load = startIngestLoad(relay.url, basic(WRITE_KEY))
    cleanups.push(() => load.stop())
    const progress = async (what: string, timeoutMs = 30_000) => {
      const before = load.acknowledged.size
      await waitFor(() => (load.acknowledged.size >= before + 100 ? true : undefined), what, timeoutMs)
    }
    await progress('the first acknowledged messages')

    await pair.primary.kill()
    // No host accepts writes: ingest refuses, and /healthz says why.
    const refusedBefore = load.statuses.get(503) ?? 0
    await waitFor(() => ((load.statuses.get(503) ?? 0) > refusedBefore ? true : undefined), 'ingest to answer 503')
    // The first failures are the cut connections'; the reason turns to the search's at once.
    await waitFor(async () => {
      const response = await healthz()
      if (response === undefined) return undefined
      const { reason } = (await response.json()) as { reason?: string }
      return response.status === 503 && /no database host accepts writes/.test(reason ?? '') ? true : undefined
    }, '/healthz to answer 503, saying no host accepts writes')

    await pair.standby.promote()
    // Within 30 s of the promotion, ingest takes messages again (the bound of the contract).
    await progress('ingest to take messages on the new primary', 30_000)
    await load.stop()

    expect(relay.child.exitCode).toBeNull()
    const missing = () => [...load.acknowledged].filter((id) => !receiver.sent.has(id))
    await waitFor(() => (missing().length === 0 ? true : undefined), 'every acknowledged message to arrive', 60_000)
    await waitFor(async () => ((await healthz())?.status === 200 ? true : undefined), '/healthz 200')
  }, 180_000)
})

describe('what a standby has when the primary dies', () => {
  /** Stops the standby from receiving anything more (its WAL receiver told to stream from nowhere). */
  async function detachStandby(pair: PostgresPair): Promise<void> {
    await pair.query(pair.standby.url(), "ALTER SYSTEM SET primary_conninfo = ''")
    await pair.query(pair.standby.url(), 'SELECT pg_reload_conf()')
    await waitFor(
      async () =>
        (await pair.query(pair.primary.url(), 'SELECT 1 FROM pg_stat_replication')).length === 0 ? true : undefined,
      'the standby to stop streaming',
    )
  }

  it('loses a commit acknowledged while it was not synchronous, and never acknowledges one while it is', async () => {
    const pair = await startPair(false)
    const primary = pair.primary.url('tracklet')
    await pair.createDatabase('tracklet')
    await pair.query(primary, 'CREATE TABLE acked (id text)')
    await waitFor(
      async () =>
        (await pair.query(pair.standby.url('tracklet'), "SELECT to_regclass('acked') AS t"))[0]?.t ? true : undefined,
      'the table to reach the standby',
    )
    await detachStandby(pair)
    // Not synchronous: acknowledged to the client, committed on the primary alone.
    await pair.query(primary, "INSERT INTO acked VALUES ('not-synchronous')")
    // Synchronous from now on: the commit waits for the standby, which receives nothing.
    await pair.query(pair.primary.url(), "ALTER SYSTEM SET synchronous_standby_names = 'standby'")
    await pair.query(pair.primary.url(), 'SELECT pg_reload_conf()')
    const insert = pair.query(primary, "INSERT INTO acked VALUES ('synchronous')").then(
      () => 'acknowledged',
      () => 'failed',
    )
    await waitFor(async () => {
      const rows = await pair.query(pair.primary.url(), "SELECT 1 FROM pg_stat_activity WHERE wait_event = 'SyncRep'")
      return rows.length === 1 ? true : undefined
    }, 'the commit to wait for the synchronous standby')

    // The relay's own commit, whose wait someone cancels (pg_cancel_backend): PostgreSQL commits it
    // on the primary with only a warning; the relay takes that for a failure (ingest answers 503).
    const pool = await openPool(primary, { max: 1, storeTimeout: 20_000 })
    cleanups.push(() => pool.end())
    const relayCommit = transaction(pool, async (client) => {
      await client.query("INSERT INTO acked VALUES ('relay')")
    }).then(
      () => 'acknowledged',
      (error: { code?: string }) => error.code,
    )
    const waiting =
      "SELECT pid FROM pg_stat_activity WHERE wait_event = 'SyncRep' AND application_name = 'tracklet-relay'"
    const pid = await waitFor(async () => (await pair.query<{ pid: number }>(pair.primary.url(), waiting))[0]?.pid)
    await pair.query(pair.primary.url(), 'SELECT pg_cancel_backend($1)', [pid])
    expect(await relayCommit).toBe('ERR_RELAY_UNREPLICATED')

    await pair.primary.kill()
    await pair.standby.promote()
    // The acknowledged row is gone; the synchronous ones were never acknowledged.
    expect(await pair.query(pair.standby.url('tracklet'), 'SELECT id FROM acked')).toEqual([])
    expect(await insert).toBe('failed')
  }, 120_000)
})
