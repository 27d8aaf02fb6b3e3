import { execFileSync } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout } from 'node:timers/promises'
import Database from 'better-sqlite3'
import { request } from 'undici'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Relay } from '../../../src/relay/index'
import { basic, type Receiver, startReceiver, startRelay, track, WRITE_KEY, waitFor } from '../helpers'

// Issue 17 point 6, on a real full disk: a relay whose SQLite file sits on a small tmpfs that is
// then filled. While ingest refuses (503), /healthz must never answer 200: its probe rewrites one
// row, which can still fit where ingest's inserts do not, so a health check that trusts the probe
// alone sends a load balancer's traffic to a relay that refuses it.
//
// Where the small write still fits: a WAL file keeps its size when SQLite starts writing it from
// the beginning again after a checkpoint. With the disk full, commits go on as long as they fit in
// that room; a batch no longer does, a one-row rewrite still does.
//
// Mounting needs root (CI runs as root); elsewhere the suite is skipped, and says why.

const TMPFS_SIZE = '16m'
// A batch (under the 500 KB limit) far larger than what a one-row probe writes.
const MESSAGES_PER_BATCH = 200
const PADDING = 'x'.repeat(2000)
// Enough batches to grow the WAL file to a few MB, under SQLite's automatic checkpoint (4 MB).
const WARM_UP_BATCHES = 5
const REFUSED_BATCHES = 8
const POLLS_PER_BATCH = 20
const POLL_INTERVAL_MS = 50

// Whether this machine lets the test mount a tmpfs: tried once, on a folder of its own, at once undone.
const canMount = (() => {
  const trial = mkdtempSync(join(tmpdir(), 'tracklet-mount-trial-'))
  try {
    mountTmpfs(trial, '1m')
    execFileSync('umount', [trial])
    return true
  } catch {
    return false
  } finally {
    rmSync(trial, { recursive: true, force: true })
  }
})()

function mountTmpfs(at: string, size: string): void {
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', at], { stdio: 'ignore' })
}

/** Writes `path` until the file system has no room left (ENOSPC). */
function fillDisk(path: string): void {
  const fd = openSync(path, 'w')
  const chunk = Buffer.alloc(64 * 1024, 1)
  try {
    for (;;) writeSync(fd, chunk)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error
  } finally {
    closeSync(fd)
  }
}

async function ingest(url: string): Promise<number> {
  const batch = Array.from({ length: MESSAGES_PER_BATCH }, () => track({ properties: { padding: PADDING } }))
  const response = await request(`${url}/v1/batch`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: basic(WRITE_KEY) },
    body: JSON.stringify({ batch }),
  })
  await response.body.dump()
  return response.statusCode
}

async function healthStatus(url: string): Promise<number> {
  const response = await request(`${url}/healthz`)
  await response.body.dump()
  return response.statusCode
}

const title = canMount
  ? 'SQLite on a full disk (a real tmpfs)'
  : 'SQLite on a full disk (skipped: mounting a tmpfs needs root, as in CI)'

describe.skipIf(!canMount)(title, () => {
  let dir: string
  let filler: string
  let receiver: Receiver
  let relay: Relay | undefined

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tracklet-full-disk-'))
    mountTmpfs(dir, TMPFS_SIZE)
    filler = join(dir, 'filler')
    receiver = await startReceiver()
  })

  afterEach(async () => {
    rmSync(filler, { force: true })
    receiver.respond((_req, res) => res.writeHead(200).end('ok'))
    await relay?.close()
    relay = undefined
  })

  afterAll(async () => {
    await receiver?.close()
    execFileSync('umount', [dir])
    rmSync(dir, { recursive: true, force: true })
  })

  // /healthz reflects ingest's own writes: its probe is never smaller than the write that failed,
  // so a one-row probe that still fits cannot turn it 200 while batches do not.
  it('never answers /healthz 200 while ingest refuses; both recover once space is freed', async () => {
    // The deliveries wait on a receiver that never answers: the worker writes no outcome, and with
    // one delivery in flight and a long lease it claims nothing more, so the only writes are
    // ingest's and the health probe's.
    receiver.respond(() => {})
    const database = join(dir, 'relay.db')
    relay = await startRelay(receiver.url, {
      database,
      concurrency: 1,
      leaseTimeout: 3_600_000,
      webhookTimeout: 600_000,
    })
    const url = relay.url
    for (let i = 0; i < WARM_UP_BATCHES; i++) expect(await ingest(url)).toBe(200)
    checkpoint(database)
    expect(await healthStatus(url)).toBe(200)

    fillDisk(filler)
    // Commits still fit in the WAL file's room for a while; then ingest refuses.
    await waitFor(async () => ((await ingest(url)) === 503 ? true : undefined), 'ingest to refuse a batch', 30_000)
    const refusals: number[] = []
    const polls: number[] = []
    for (let round = 0; round < REFUSED_BATCHES; round++) {
      refusals.push(await ingest(url))
      // A load balancer's polls between two batches (the health probe starts 250 ms after a failure).
      for (let i = 0; i < POLLS_PER_BATCH; i++) {
        polls.push(await healthStatus(url))
        await setTimeout(POLL_INTERVAL_MS)
      }
    }
    expect(refusals.every((status) => status === 503)).toBe(true)
    // Every answer while ingest refused: not one 200 (today: about three in four).
    expect(polls.filter((status) => status === 200).length, `200s among ${polls.length} polls`).toBe(0)

    rmSync(filler)
    await waitFor(async () => ((await ingest(url)) === 200 ? true : undefined), 'ingest to answer 200 again', 30_000)
    await waitFor(async () => ((await healthStatus(url)) === 200 ? true : undefined), '/healthz 200 again', 30_000)
  }, 120_000)
})

/**
 * Copies the WAL into the database file from a second connection (as SQLite's automatic
 * checkpoint does every 4 MB): the relay's next commit writes the WAL from its start again, in
 * the room the file already has.
 */
function checkpoint(database: string): void {
  const db = new Database(database)
  try {
    db.pragma('wal_checkpoint(PASSIVE)')
  } finally {
    db.close()
  }
}
