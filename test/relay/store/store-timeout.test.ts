import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { request } from 'undici'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { RELAY_DEFAULTS } from '../../../src/relay/config/defaults'
import { RelayConfigError, type Relay } from '../../../src/relay/index'
import { validateRelayOptions } from '../../../src/relay/config/validate'
import { openSqliteDatabase } from '../../../src/relay/store/sqlite/schema'
import { post, type Receiver, startReceiver, startRelay, track, WRITE_KEY, waitFor } from '../helpers'

// The `storeTimeout` option (issue 17 point 5): validated like every option, and on SQLite the
// bound on waiting for a lock another process holds. (PostgreSQL: frozen-database.test.ts.)

let dir: string
let receiver: Receiver | undefined
let relay: Relay | undefined
let other: Database.Database | undefined

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tracklet-store-timeout-'))
})
afterEach(async () => {
  if (other?.inTransaction) other.exec('ROLLBACK')
  other?.close()
  other = undefined
  await relay?.close()
  relay = undefined
  await receiver?.close()
  receiver = undefined
  rmSync(dir, { recursive: true, force: true })
})

async function healthStatus(url: string): Promise<number> {
  const response = await request(`${url}/healthz`)
  await response.body.dump()
  return response.statusCode
}

describe('storeTimeout', () => {
  it('is 5000 ms unless given, and refuses values no database could meet, naming the option', () => {
    const sources = [{ name: 'web', writeKey: WRITE_KEY }]
    expect(validateRelayOptions({ sources }).storeTimeout).toBe(5000)
    expect(validateRelayOptions({ sources, storeTimeout: 1000 }).storeTimeout).toBe(1000)
    for (const storeTimeout of [50, 0, 1.5, '5000', 3_600_000]) {
      const error = (() => {
        try {
          validateRelayOptions({ sources, storeTimeout })
        } catch (thrown) {
          return thrown
        }
      })()
      expect(error).toBeInstanceOf(RelayConfigError)
      expect((error as RelayConfigError).field).toBe('storeTimeout')
    }
  })

  it('is the SQLite busy timeout (the wait for a lock another process holds)', async () => {
    const given = await openSqliteDatabase(join(dir, 'given.db'), { busyTimeout: 1234 })
    const unset = await openSqliteDatabase(join(dir, 'unset.db'))
    try {
      expect(given.pragma('busy_timeout', { simple: true })).toBe(1234)
      expect(unset.pragma('busy_timeout', { simple: true })).toBe(RELAY_DEFAULTS.storeTimeout)
    } finally {
      given.close()
      unset.close()
    }
  })

  it('answers ingest 503 and /healthz 503 on SQLite while another process holds the lock, then 200 again', async () => {
    receiver = await startReceiver()
    const database = join(dir, 'relay.db')
    relay = await startRelay(receiver.url, { database, storeTimeout: 200 })
    expect((await post(`${relay.url}/v1/batch`, { batch: [track()] })).status).toBe(200)

    // A second process on the file by mistake, holding the write lock.
    other = new Database(database)
    other.exec('BEGIN IMMEDIATE')
    const refused = await post(`${relay.url}/v1/batch`, { batch: [track()] })
    expect(refused.status).toBe(503)
    expect(refused.body.error.code).toBe('ERR_OUTBOX_UNAVAILABLE')
    expect(await healthStatus(relay.url)).toBe(503)

    other.exec('COMMIT')
    const url = relay.url
    await waitFor(
      async () => ((await post(`${url}/v1/batch`, { batch: [track()] })).status === 200 ? true : undefined),
      'ingest to answer 200 again',
    )
    await waitFor(async () => ((await healthStatus(url)) === 200 ? true : undefined), '/healthz 200 again')
  })
})
