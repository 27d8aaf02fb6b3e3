import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { createRelay, type Relay } from '../../../src/relay/index'
import { MIGRATIONS } from '../../../src/relay/store/postgres/schema'
import { freshPostgresDatabase, sql } from '../../support/postgres'
import { freePort } from '../../support/postgres-server.mjs'
import { type RelayProcess, useCli } from '../../support/cli-process'
import { startTcpProxy } from '../../support/tcp-proxy'
import { ADMIN_TOKEN, admin, adminGet, post, track, waitFor, WRITE_KEY } from '../helpers'

// Several relays on one PostgreSQL database: real relay processes (the built CLI) or relays in
// this process, a real PostgreSQL server, a real node:http receiver.

const dir = mkdtempSync(join(tmpdir(), 'tracklet-scale-out-'))
const cleanups: (() => Promise<unknown> | unknown)[] = []

afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
})
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})
const cli = useCli()

/** A receiver that counts each message id it was sent, and can hold its answers. */
async function startCountingReceiver() {
  const sent = new Map<string, number>()
  /** Message ids answered 200 on a connection still open (so the relay saw the success). */
  const answered = new Set<string>()
  const held: { messageId: string; req: IncomingMessage; res: ServerResponse }[] = []
  let holding = false
  /** Waits for what happens (see `when` below), checked each time a request comes or is answered. */
  const waiters: { holds: () => boolean; resolve: () => void }[] = []
  const recheck = () => {
    for (const waiter of waiters.filter((w) => w.holds())) {
      waiters.splice(waiters.indexOf(waiter), 1)
      waiter.resolve()
    }
  }
  const answer = (messageId: string, req: IncomingMessage, res: ServerResponse) => {
    if (req.socket.destroyed) return
    res.writeHead(200).end()
    answered.add(messageId)
    recheck()
  }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const { messageId } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { messageId: string }
      sent.set(messageId, (sent.get(messageId) ?? 0) + 1)
      if (holding) held.push({ messageId, req, res })
      else answer(messageId, req, res)
      recheck()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const receiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    sent,
    answered,
    held,
    hold: () => (holding = true),
    /**
     * Resolves once `holds()` does, on the receiver's own events rather than a deadline: how fast
     * relays deliver is the CPU's to give on a loaded machine (the test's timeout still bounds it).
     */
    when: (holds: () => boolean) =>
      holds() ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ holds, resolve })),
    /** Answers every held request whose connection is still open, and answers at once from now on. */
    releaseAll: () => {
      holding = false
      for (const h of held.splice(0)) answer(h.messageId, h.req, h.res)
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
  cleanups.push(() => receiver.close())
  return receiver
}

function writeConfig(name: string, receiverUrl: string, extra: Record<string, unknown> = {}): string {
  const path = join(dir, `${name}.json`)
  writeFileSync(
    path,
    JSON.stringify({
      port: 0,
      adminToken: ADMIN_TOKEN,
      allowPrivateNetworks: true,
      sources: [{ name: 'web', writeKey: WRITE_KEY, destinations: { Webhooks: { webhooks: [{ url: receiverUrl }] } } }],
      ...extra,
    }),
  )
  return path
}

/** Starts `tracklet relay` with the database given by `--database`, or by DATABASE_URL when `viaEnv`. */
function startRelayProcess(config: string, database: string, viaEnv = false): Promise<RelayProcess> {
  return cli.startRelay(['--config', config, ...(viaEnv ? [] : ['--database', database])], {
    DEBUG: 'tracklet:relay',
    LOG_LEVEL: 'debug',
    ...(viaEnv ? { DATABASE_URL: database } : {}),
  })
}

const deliveredBy = (relay: RelayProcess) =>
  (relay.output().match(/delivery \d+ of source web delivered/g) ?? []).length

async function startInProcess(database: string, receiverUrl: string, extra: Record<string, unknown> = {}) {
  const relay = await createRelay({
    port: 0,
    database,
    adminToken: ADMIN_TOKEN,
    allowPrivateNetworks: true,
    sources: [{ name: 'web', writeKey: WRITE_KEY, destinations: { Webhooks: { webhooks: [{ url: receiverUrl }] } } }],
    ...extra,
  })
  cleanups.push(() => relay.close())
  return relay
}

function batches(prefix: string, count: number, size = 100): Record<string, unknown>[][] {
  return Array.from({ length: Math.ceil(count / size) }, (_, b) =>
    Array.from({ length: Math.min(size, count - b * size) }, (_, i) =>
      track({ messageId: `${prefix}-${b * size + i}` }),
    ),
  )
}

// On a machine shared with other work (CI, a laptop building), 5,000 messages can take minutes:
// each wait is given this long, ms, and the test four times that.
const LOADED_WAIT_MS = 90_000

// Options for a test that asserts one attempt per message: a stall of the machine must not read
// as a receiver's timeout, a store's or an expired lease (each of which means another attempt).
const UNDER_LOAD = { webhookTimeout: 120_000, storeTimeout: 120_000, leaseTimeout: 300_000, requestTimeout: 300_000 }

describe('two relays on one PostgreSQL database', () => {
  it(
    'deliver 5,000 messages between them, each attempted once while both are healthy',
    async () => {
      const database = await freshPostgresDatabase()
      const receiver = await startCountingReceiver()
      // "Healthy" holds on a loaded machine too: the limits that judge a slow answer a failure (a
      // receiver's, the store's, a lease's) are set past any stall of the machine, so a message
      // attempted twice is the relays' doing, never the load's.
      const config = writeConfig('pair', receiver.url, UNDER_LOAD)
      const [a, b] = await Promise.all([
        startRelayProcess(config, database),
        startRelayProcess(config, database, true), // DATABASE_URL selects the same store
      ])
      // Each relay takes in half the traffic, as behind a load balancer.
      const all = batches('m', 5000)
      const answers = await Promise.all(all.map((batch, i) => post(`${(i % 2 === 0 ? a : b).url}/v1/batch`, { batch })))
      expect(answers.every((answer) => answer.status === 200)).toBe(true)
      await waitFor(() => (receiver.sent.size === 5000 ? true : undefined), 'every message to arrive', LOADED_WAIT_MS)
      await waitFor(
        async () => {
          const [row] = await sql<{ n: number }>(
            database,
            "SELECT count(*)::int AS n FROM deliveries WHERE status = 'delivered'",
          )
          return row!.n === 5000 ? true : undefined
        },
        'every outcome to be recorded',
        LOADED_WAIT_MS,
      )

      // Each message reached the receiver once, and the log shows one attempt per delivery.
      expect([...receiver.sent.values()].filter((count) => count !== 1)).toEqual([])
      expect(await sql(database, 'SELECT delivery_id FROM attempts GROUP BY delivery_id HAVING count(*) <> 1')).toEqual(
        [],
      )
      expect((await sql<{ n: number }>(database, 'SELECT count(*)::int AS n FROM attempts'))[0]!.n).toBe(5000)
      // Both did part of the work (log lines are written asynchronously: wait for them).
      await waitFor(
        () => (deliveredBy(a) + deliveredBy(b) >= 5000 ? true : undefined),
        'every delivered line',
        LOADED_WAIT_MS,
      )
      expect(deliveredBy(a)).toBeGreaterThan(0)
      expect(deliveredBy(b)).toBeGreaterThan(0)
      expect(deliveredBy(a) + deliveredBy(b)).toBe(5000)
    },
    4 * LOADED_WAIT_MS,
  )

  it('deliver the work of one killed with kill -9 once its leases run out, losing nothing acknowledged', async () => {
    const database = await freshPostgresDatabase()
    const receiver = await startCountingReceiver()
    const config = writeConfig('crash', receiver.url, { leaseTimeout: 1000, concurrency: 8 })
    const a = await startRelayProcess(config, database)
    const b = await startRelayProcess(config, database)
    receiver.hold()
    const answers = await Promise.all(batches('k', 300).map((batch) => post(`${a.url}/v1/batch`, { batch })))
    expect(answers.every((answer) => answer.status === 200)).toBe(true)
    // Both relays have attempts in flight (8 each), and leases on more.
    await receiver.when(() => receiver.held.length === 16) // both relays fill their slots
    const owners = await sql<{ n: number }>(database, 'SELECT count(DISTINCT lease_owner)::int AS n FROM deliveries')
    expect(owners[0]!.n).toBe(2)

    a.child.kill('SIGKILL')
    await a.exited
    // The requests the dead relay had in flight: their connections are gone.
    const closed = () => receiver.held.filter((h) => h.req.socket.destroyed)
    await waitFor(() => (closed().length === 8 ? true : undefined), 'its 8 connections to close')
    const lostInFlight = closed().map((h) => h.messageId)
    receiver.releaseAll()

    await receiver.when(() => receiver.answered.size === 300) // every message answered
    for (const id of lostInFlight) expect(receiver.answered.has(id)).toBe(true)
    await waitFor(async () => {
      const rows = await sql<{ status: string; n: number }>(
        database,
        'SELECT status, count(*)::int AS n FROM deliveries GROUP BY status',
      )
      return rows.length === 1 && rows[0]!.status === 'delivered' && rows[0]!.n === 300 ? true : undefined
    }, 'every delivery to be recorded as delivered')
    b.child.kill('SIGTERM')
    expect(await b.exited).toBe(0)
  }, 60_000)

  it('serve the admin API from either relay: the log, retry, deletions and audiences', async () => {
    const database = await freshPostgresDatabase()
    const receiver = await startCountingReceiver()
    const a = await startInProcess(database, receiver.url)
    const b = await startInProcess(database, receiver.url)
    await post(`${a.url}/v1/batch`, { batch: [track({ messageId: 'seen-by-b' })] })
    const listed = await adminGet(`${b.url}/v1/deliveries`)
    expect(listed.body.deliveries.map((d: { messageId: string }) => d.messageId)).toEqual(['seen-by-b'])

    // An audience synced on one relay and then on the other sees the first one's members.
    await post(`${a.url}/v1/audiences/vip`, { source: 'web', userIds: ['u1', 'u2'] }, admin, 'PUT')
    const second = await post(`${b.url}/v1/audiences/vip`, { source: 'web', userIds: ['u2'] }, admin, 'PUT')
    expect(second.body).toEqual({ added: [], removed: ['u1'] })

    expect((await post(`${b.url}/v1/deletions`, { userId: 'u-gone' }, admin)).status).toBe(202)
    await waitFor(() => (receiver.sent.size === 5 ? true : undefined), 'the five messages')

    // A dead-lettered delivery is retried from the other relay.
    const [failed] = await sql<{ id: number }>(
      database,
      "UPDATE deliveries SET status = 'failed', last_error = 'x' WHERE message_id = 'seen-by-b' RETURNING id::int",
    )
    expect((await post(`${a.url}/v1/deliveries/${failed!.id}/retry`, {}, admin)).status).toBe(202)
    await waitFor(() => (receiver.sent.get('seen-by-b') === 2 ? true : undefined), 'the retried delivery')
  })

  it('all come up when three start at once on an empty database', async () => {
    const database = await freshPostgresDatabase()
    const receiver = await startCountingReceiver()
    const relays = await Promise.all([1, 2, 3].map(() => startInProcess(database, receiver.url)))
    expect(await sql(database, 'SELECT version FROM tracklet_schema')).toEqual([{ version: MIGRATIONS.length }])
    for (const [i, relay] of relays.entries()) {
      expect((await post(`${relay.url}/v1/batch`, { batch: [track({ messageId: `r${i}` })] })).status).toBe(200)
    }
    await waitFor(() => (receiver.sent.size === 3 ? true : undefined), 'one message from each')
  })
})

describe('a relay and its PostgreSQL database', () => {
  it('fails to start with a clear error when the database cannot be reached, never showing the password', async () => {
    const port = await freePort()
    const database = `postgres://tracklet:s3cret-pw@127.0.0.1:${port}/outbox?sslmode=disable`
    const error = (await createRelay({ port: 0, database, sources: [{ name: 'web', writeKey: WRITE_KEY }] }).catch(
      (e: unknown) => e,
    )) as Error & { code: string }
    expect(error).toMatchObject({ code: 'ERR_RELAY_DATABASE' })
    expect(error.message).toContain(`PostgreSQL database at 127.0.0.1:${port}/outbox`)
    expect(error.message).toContain('ECONNREFUSED')
    expect(error.message).not.toContain('s3cret-pw')
    expect(error.message).not.toContain('sslmode')
  })

  it('answers ingest 503 while the database is lost, and recovers by itself when it returns', async () => {
    const target = new URL(await freshPostgresDatabase())
    const proxy = await startTcpProxy(Number(target.port))
    cleanups.push(() => proxy.close())
    const database = new URL(target)
    database.port = String(proxy.port)
    const receiver = await startCountingReceiver()
    const relay: Relay = await startInProcess(database.toString(), receiver.url)

    expect((await post(`${relay.url}/v1/batch`, { batch: [track({ messageId: 'before' })] })).status).toBe(200)
    await waitFor(() => (receiver.answered.has('before') ? true : undefined), 'the first delivery')

    await proxy.cut() // every connection drops; new ones are refused
    for (const id of ['during-1', 'during-2']) {
      const answer = await post(`${relay.url}/v1/batch`, { batch: [track({ messageId: id })] })
      expect(answer.status).toBe(503)
      expect(answer.body.error.code).toBe('ERR_OUTBOX_UNAVAILABLE')
    }

    await proxy.restore()
    const after = await waitFor(async () => {
      const answer = await post(`${relay.url}/v1/batch`, { batch: [track({ messageId: 'after' })] })
      return answer.status === 200 ? answer : undefined
    }, 'ingest to recover')
    expect(after.status).toBe(200)
    await waitFor(() => (receiver.answered.has('after') ? true : undefined), 'delivery to recover')
    expect(receiver.sent.has('during-1')).toBe(false) // refused, so never promised
  })
})
