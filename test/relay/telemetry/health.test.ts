import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { request } from 'undici'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { Relay } from '../../../src/relay/index'
import { StoreHealth } from '../../../src/relay/telemetry/health'
import {
  admin,
  adminGet,
  post,
  type Receiver,
  startReceiver,
  startRelay,
  track,
  waitFor,
  waitForDelivery,
} from '../helpers'

const REFUSAL = 'disk I/O error (the test broke this table)'

let dir: string
let receiver: Receiver
let relay: Relay
let db: Database.Database

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tracklet-health-'))
  receiver = await startReceiver()
  relay = await startRelay(receiver.url, { database: join(dir, 'relay.db') })
  // A second connection to the relay's file: triggers made here refuse the relay's own writes.
  db = new Database(join(dir, 'relay.db'))
})
afterEach(async () => {
  db.close()
  await relay.close()
  await receiver.close()
  rmSync(dir, { recursive: true, force: true })
})

/** Makes every `operation` on `table` fail, as a full disk or a read-only file would. */
function breakWrites(table: string, operations = ['INSERT', 'UPDATE', 'DELETE']): void {
  for (const op of operations) {
    db.exec(
      `CREATE TRIGGER broken_${table}_${op} BEFORE ${op} ON ${table} BEGIN SELECT RAISE(ABORT, '${REFUSAL}'); END`,
    )
  }
}

function healWrites(): void {
  const triggers = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'trigger'`).pluck().all() as string[]
  for (const name of triggers) db.exec(`DROP TRIGGER ${name}`)
}

// With the admin token: the errors behind a 503 are shown only to it.
async function healthz(headers: Record<string, string> = admin): Promise<{ status: number; body: any }> {
  const response = await request(`${relay.url}/healthz`, { headers })
  return { status: response.statusCode, body: await response.body.json() }
}

const waitForHealth = (status: number) =>
  waitFor(async () => {
    const answer = await healthz()
    return answer.status === status ? answer : undefined
  }, `/healthz to answer ${status}`)

describe('GET /healthz', () => {
  it('answers 503 with the reason when new deliveries cannot be written, and 200 again by itself', async () => {
    expect(await healthz()).toEqual({ status: 200, body: { ok: true } })
    breakWrites('deliveries')
    breakWrites('attempts')
    breakWrites('audience_members')

    const refused = await post(`${relay.url}/v1/track`, track())
    expect(refused.status).toBe(503)
    const sick = await healthz()
    expect(sick.status).toBe(503)
    expect(sick.body).toMatchObject({
      ok: false,
      reason: `the store refuses writes of deliveries: ${REFUSAL}`,
      failing: [{ writes: 'deliveries', error: REFUSAL, since: expect.any(String) }],
    })

    // No request comes (a load balancer has taken the relay out): the relay finds out by itself.
    healWrites()
    expect(await waitForHealth(200)).toEqual({ status: 200, body: { ok: true } })
    const message = track()
    expect((await post(`${relay.url}/v1/track`, message)).status).toBe(200)
    await waitForDelivery(relay.url, 'delivered', message['messageId'] as string)
    // The probe writes nothing anyone sees: the delivery log holds only the real message.
    expect((await adminGet(`${relay.url}/v1/deliveries`)).body.deliveries).toHaveLength(1)
  })

  it('tells a client without the admin token what fails, never the error (it may name the database)', async () => {
    breakWrites('deliveries')
    breakWrites('audience_members')
    const refused = await post(`${relay.url}/v1/track`, track())
    expect(refused).toEqual({
      status: 503,
      body: {
        error: {
          code: 'ERR_OUTBOX_UNAVAILABLE',
          message: 'the messages could not be stored: the store is unavailable',
        },
      },
    })
    for (const headers of [{}, { authorization: 'Bearer not-the-token' }]) {
      const sick = await healthz(headers)
      expect(sick).toEqual({
        status: 503,
        body: {
          ok: false,
          reason: 'the store refuses writes of deliveries',
          failing: [{ writes: 'deliveries', since: expect.any(String) }],
        },
      })
      expect(JSON.stringify(sick.body)).not.toContain(REFUSAL)
    }
    expect((await healthz()).body.reason).toBe(`the store refuses writes of deliveries: ${REFUSAL}`)
  })

  it('answers 503 while the outcomes of attempts cannot be written, and 200 once they are', async () => {
    breakWrites('attempts', ['INSERT'])
    const message = track()
    expect((await post(`${relay.url}/v1/track`, message)).status).toBe(200)
    const sick = await waitForHealth(503)
    expect(sick.body.failing).toEqual([{ writes: 'outcomes', error: REFUSAL, since: expect.any(String) }])

    healWrites()
    await waitForHealth(200)
    await waitForDelivery(relay.url, 'delivered', message['messageId'] as string)
  })

  it('answers 503 while due deliveries cannot be claimed, and 200 once they are', async () => {
    breakWrites('deliveries', ['UPDATE'])
    const message = track()
    expect((await post(`${relay.url}/v1/track`, message)).status).toBe(200)
    const sick = await waitForHealth(503)
    expect(sick.body.failing).toEqual([{ writes: 'claims', error: REFUSAL, since: expect.any(String) }])
    expect(receiver.received).toHaveLength(0)

    healWrites()
    await waitForHealth(200)
    await waitForDelivery(relay.url, 'delivered', message['messageId'] as string)
  })
})

describe('StoreHealth', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('probes, less and less often, only while writes that clients make are failing', async () => {
    vi.useFakeTimers()
    let probes = 0
    let storeWorks = false
    const health = new StoreHealth({
      probe: async () => {
        probes++
        if (!storeWorks) throw new Error('SQLITE_FULL: database or disk is full')
      },
    })
    health.failed('deliveries', new Error('SQLITE_FULL: database or disk is full'))
    await vi.advanceTimersByTimeAsync(250)
    expect(probes).toBe(1)
    await vi.advanceTimersByTimeAsync(499)
    expect(probes).toBe(1)
    await vi.advanceTimersByTimeAsync(1)
    expect(probes).toBe(2)
    storeWorks = true
    await vi.advanceTimersByTimeAsync(1000)
    expect(probes).toBe(3)
    expect(health.report()).toEqual({ ok: true })
    await vi.advanceTimersByTimeAsync(60_000)
    expect(probes).toBe(3)
  })

  it('lets a probe speak for new deliveries, never for outcomes, which only their own write clears', async () => {
    vi.useFakeTimers()
    const health = new StoreHealth({ probe: async () => {} })
    health.failed('outcomes', new Error('database is locked'))
    health.failed('deliveries', new Error('database is locked'))
    await vi.advanceTimersByTimeAsync(10_000)
    expect(health.report()).toMatchObject({ ok: false, failing: [{ writes: 'outcomes' }] })
    health.succeeded('outcomes')
    expect(health.report()).toEqual({ ok: true })
  })

  it('shows an error without the query string or password of a URL in it (/healthz needs no token)', () => {
    const health = new StoreHealth({ probe: async () => {} })
    health.failed('claims', new Error('connect to postgres://tracklet:pw-s3cret@db:5432/t?sslkey=k1 failed'))
    health.stop()
    const text = JSON.stringify(health.report())
    expect(text).toContain('postgres://db:5432/t failed')
    expect(text).not.toContain('pw-s3cret')
    expect(text).not.toContain('k1')
  })
})
