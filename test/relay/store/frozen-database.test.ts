import { readdirSync, readFileSync } from 'node:fs'
import { request } from 'undici'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Relay } from '../../../src/relay/index'
import { type PostgresServer, startPostgresServer } from '../../support/postgres-server.mjs'
import { basic, type Receiver, startReceiver, startRelay, track, WRITE_KEY, waitFor } from '../helpers'

// Issue 17 point 5: a PostgreSQL server that is frozen (SIGSTOP: its kernel still accepts TCP, but
// nothing ever answers) fails ingest with a 503 and turns /healthz 503 within `storeTimeout`,
// instead of holding requests for pg's old 30 s; both recover by themselves after SIGCONT.
// The server is this file's own, so freezing it cannot stall any other suite.

// Small, so the test is quick; the default is 5000.
const STORE_TIMEOUT = 1000
// What an SDK would wait before giving up on its own (a timeout, which it cannot act on like a 503):
// well above the bound, so only a relay that holds the request runs into it.
const CLIENT_TIMEOUT = 15_000

let server: PostgresServer
let receiver: Receiver
let relay: Relay | undefined
let frozen: number[] = []

beforeAll(async () => {
  server = await startPostgresServer()
  receiver = await startReceiver()
}, 120_000)

afterEach(async () => {
  // Never leave the server stopped: the relay's close and the server's stop would wait forever.
  thaw()
  await relay?.close()
  relay = undefined
})

afterAll(async () => {
  await receiver?.close()
  await server?.stop()
}, 60_000)

/** The postmaster of the server on `port`: its command line names the port. */
function postmasterOf(port: number): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0')
      const p = argv.indexOf('-p')
      if (p !== -1 && argv[p + 1] === String(port) && /postgres$/.test(argv[0] ?? '')) return Number(entry)
    } catch {
      // It exited meanwhile.
    }
  }
  throw new Error(`no PostgreSQL server found on port ${port}`)
}

/** The processes whose parent is `parent` (a server's backends, checkpointer, WAL writer…). */
function childrenOf(parent: number): number[] {
  const children: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      // The fields after the command's name (in parentheses, which may hold spaces): state, ppid.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === parent) children.push(Number(entry))
    } catch {
      // It exited meanwhile.
    }
  }
  return children
}

/** A process's state letter in /proc (`T`: stopped). */
function stateOf(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? ''
}

/** Stops every process of the server: it keeps its sockets open but answers nothing. */
function freeze(): void {
  // The postmaster first: stopped, it forks no new backend, so its children can then be listed
  // once and for all (a backend forked just before is listed too).
  const postmaster = postmasterOf(server.port)
  process.kill(postmaster, 'SIGSTOP')
  frozen.push(postmaster)
  // A signal is delivered on the way back from a system call (a fork under way completes first).
  while (stateOf(postmaster) !== 'T') {}
  for (const pid of childrenOf(postmaster)) {
    process.kill(pid, 'SIGSTOP')
    frozen.push(pid)
  }
}

function thaw(): void {
  for (const pid of frozen) {
    try {
      process.kill(pid, 'SIGCONT')
    } catch {
      // Already gone.
    }
  }
  frozen = []
}

async function ingest(url: string): Promise<{ status: number; body: any }> {
  const response = await request(`${url}/v1/batch`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: basic(WRITE_KEY) },
    body: JSON.stringify({ batch: [track()] }),
    headersTimeout: CLIENT_TIMEOUT,
  })
  const text = await response.body.text()
  return { status: response.statusCode, body: text.length > 0 ? JSON.parse(text) : undefined }
}

async function healthz(url: string): Promise<{ status: number; body: any }> {
  const response = await request(`${url}/healthz`, { headersTimeout: CLIENT_TIMEOUT })
  return { status: response.statusCode, body: await response.body.json() }
}

describe('a frozen PostgreSQL (SIGSTOP)', () => {
  it('gets ingest answered 503 and /healthz 503 within storeTimeout; both recover after SIGCONT', async () => {
    const database = await server.createDatabase()
    relay = await startRelay(receiver.url, { database, storeTimeout: STORE_TIMEOUT }, 'postgres')
    const url = relay.url
    expect((await ingest(url)).status).toBe(200)
    expect((await healthz(url)).status).toBe(200)

    freeze()
    // Twice: the first finds an open connection whose statement is never answered; by the
    // second, connections are being opened to a server that never completes their start-up.
    for (let i = 0; i < 2; i++) {
      const refused = await ingest(url)
      expect(refused.status).toBe(503)
      const health = await healthz(url)
      expect(health.status).toBe(503)
      expect(health.body.ok).toBe(false)
    }

    thaw()
    const accepted = await waitFor(
      async () => {
        const answer = await ingest(url)
        return answer.status === 200 ? answer : undefined
      },
      'ingest to answer 200 again',
      30_000,
    )
    expect(accepted.body).toMatchObject({ success: true })
    await waitFor(async () => ((await healthz(url)).status === 200 ? true : undefined), '/healthz 200 again', 30_000)
    // The database works for the worker too: what was accepted after the freeze is delivered.
    await waitFor(() => (receiver.received.length >= 2 ? true : undefined), 'the deliveries', 30_000)
  }, 90_000)

  it('gets /healthz 503 without any ingest: the worker’s own claims time out', async () => {
    const database = await server.createDatabase()
    relay = await startRelay(receiver.url, { database, storeTimeout: STORE_TIMEOUT }, 'postgres')
    const url = relay.url
    expect((await healthz(url)).status).toBe(200)

    freeze()
    const health = await waitFor(
      async () => {
        const answer = await healthz(url)
        return answer.status === 503 ? answer : undefined
      },
      '/healthz to answer 503',
      // Before an SDK would give up: pg's own timer (30 s) would keep it 200 far longer.
      CLIENT_TIMEOUT,
    )
    expect(health.body.ok).toBe(false)

    thaw()
    await waitFor(async () => ((await healthz(url)).status === 200 ? true : undefined), '/healthz 200 again', 30_000)
    expect((await ingest(url)).status).toBe(200)
  }, 90_000)
})
