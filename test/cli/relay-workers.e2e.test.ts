import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { newDatabase, STORE_KINDS, type StoreKind } from '../support/stores'
import { waitFor } from '../support/wait-for'
import { request } from 'undici'
import { ADMIN_TOKEN, adminGet, post, type Receiver, startReceiver, track, WRITE_KEY } from '../relay/helpers'
import { PageClient } from '../relay/console/page-client'
import { parseExposition, type Sample, sampleValue } from '../relay/telemetry/prometheus'
import { listeningUrl, runTracklet, startTracklet, stopAll, type TrackletProcess, useCli } from '../support/cli-process'

// `tracklet relay --workers N` as an operator runs it: the built command, a primary and its
// worker processes on one port and one store, delivering to a real receiver.

// Built once for the file; registered before the afterEach below, which (run first) stops what a
// test left running with SIGTERM before useCli's own teardown kills anything still there.
const cli = useCli()
const dir = mkdtempSync(join(tmpdir(), 'tracklet-relay-workers-'))
let receiver: Receiver | undefined

afterEach(async () => {
  await stopAll()
  await receiver?.close()
  receiver = undefined
})
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true })
})

let configs = 0
function writeConfig(config: Record<string, unknown>): string {
  const path = join(dir, `config-${++configs}.json`)
  writeFileSync(path, JSON.stringify(config))
  return path
}

async function configFor(kind: StoreKind, leaseTimeout?: number): Promise<string> {
  receiver = await startReceiver()
  return configTo(receiver, kind, leaseTimeout)
}

async function configTo(to: Receiver, kind: StoreKind, leaseTimeout?: number): Promise<string> {
  return writeConfig({
    port: 0,
    database: await newDatabase(kind, dir, `relay-${configs + 1}.db`),
    adminToken: ADMIN_TOKEN,
    allowPrivateNetworks: true,
    leaseTimeout,
    sources: [{ name: 'web', writeKey: WRITE_KEY, destinations: { Webhooks: { webhooks: [{ url: to.url }] } } }],
  })
}

/** The pid of each worker as the primary logged it, by worker number (the latest process of each). */
function workerPids(run: TrackletProcess): Map<number, number> {
  const pids = new Map<number, number>()
  for (const [, worker, pid] of run.stderr().matchAll(/worker (\d+) (?:listening|restarted) \(pid (\d+)\)/g))
    pids.set(Number(worker), Number(pid))
  return pids
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Sends `batches` batches of `size` messages at once (spread over the workers' connections). */
async function sendBatches(url: string, batches: number, size: number, tag: string): Promise<string[]> {
  const ids: string[] = []
  await Promise.all(
    Array.from({ length: batches }, async (_, b) => {
      const batch = Array.from({ length: size }, (_, m) => track({ messageId: `${tag}-${b}-${m}` }))
      const answer = await post(`${url}/v1/batch`, { batch })
      expect(answer.status).toBe(200)
      ids.push(...batch.map((message) => message['messageId'] as string))
    }),
  )
  return ids
}

function receivedIds(by: Receiver = receiver!): string[] {
  return by.received.map((request) => request.body['messageId'] as string)
}

describe.each(STORE_KINDS)('tracklet relay --workers (%s store)', (kind) => {
  it("says where it listens once, and each worker's log lines name the worker", async () => {
    const run = startTracklet(cli.path, ['relay', '--config', await configFor(kind), '--workers', '2'], {
      LOG_FORMAT: 'json',
    })
    await listeningUrl(run)
    await waitFor(() => (workerPids(run).size === 2 ? true : undefined), 'both workers to log their start')
    expect(run.stdout().match(/listening on/g)).toHaveLength(1)
    const lines = run
      .stderr()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(lines.filter((line) => line['event'] === 'listening')).toEqual([])
    // A line a worker wrote (its relay's own: the schema, the circuits...) names it; the primary's do not.
    run.child.kill('SIGTERM')
    await run.exited
    const closed = run
      .stderr()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line['event'] === 'closed')
    expect(closed.map((line) => line['worker']).sort()).toEqual([1, 2])
  })

  // One relay for these cases (starting a primary and its workers is most of each case's time):
  // each case reads what it sent, by its messages' ids or by how far a count moved.
  describe('one relay shared by several cases', () => {
    let shared: TrackletProcess
    let url: string
    let to: Receiver
    beforeAll(async () => {
      to = await startReceiver()
      shared = startTracklet(
        cli.path,
        ['relay', '--config', await configTo(to, kind), '--workers', '2'],
        {},
        {
          sharedByCases: true,
        },
      )
      url = await listeningUrl(shared)
      // The primary's log (each worker's start) is written off the event loop: it may follow stdout's line.
      await waitFor(() => (workerPids(shared).size === 2 ? true : undefined), 'both workers to log their start')
    })
    afterAll(async () => {
      if (shared.child.exitCode === null && shared.child.signalCode === null) shared.child.kill('SIGTERM')
      await shared.exited
      await to.close()
    })

    // First, on the fresh relay: the counters it checks are the relay's whole counts.
    it("answers /metrics with one relay's series, whichever worker a scrape reaches: counters never go down", async () => {
      const scrape = async (): Promise<Sample[]> => {
        const answer = await request(`${url}/metrics`, {
          headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
          reset: true,
        })
        expect(answer.statusCode).toBe(200)
        return parseExposition(await answer.body.text())
      }
      const delivered = (samples: Sample[]) =>
        sampleValue(samples, 'tracklet_delivery_attempts_total', { outcome: 'delivered' }) ?? Number.NaN
      const ingested = (samples: Sample[]) => sampleValue(samples, 'tracklet_messages_ingested_total') ?? Number.NaN
      const seen: { delivered: number; ingested: number }[] = []
      let sent = 0
      for (let i = 0; i < 20; i++) {
        const [, samples] = await Promise.all([sendBatches(url, 2, 5, `scrape-${i}`), scrape()])
        sent += 10
        seen.push({ delivered: delivered(samples), ingested: ingested(samples) })
      }
      for (let i = 1; i < seen.length; i++) {
        expect(seen[i]!.delivered).toBeGreaterThanOrEqual(seen[i - 1]!.delivered)
        expect(seen[i]!.ingested).toBeGreaterThanOrEqual(seen[i - 1]!.ingested)
      }
      await waitFor(() => (new Set(receivedIds(to)).size === sent ? true : undefined), 'every message delivered')
      // The outcomes' writes are batched: the outbox gauge reaches 0 a moment after the counters.
      const last = await waitFor(async () => {
        const samples = await scrape()
        const drained = sampleValue(samples, 'tracklet_outbox_deliveries', { status: 'pending' }) === 0
        return delivered(samples) === sent && drained ? samples : undefined
      }, 'the relay to count every delivery, and its outbox to drain')
      // Both workers' counts, added up: each took some of the work.
      expect(ingested(last)).toBe(sent)
      // A gauge every worker reads alike is not counted twice.
      expect(sampleValue(last, 'tracklet_build_info')).toBe(1)
      expect(sampleValue(last, 'tracklet_store_writable')).toBe(1)
      expect(sampleValue(last, 'tracklet_outbox_deliveries', { status: 'pending' })).toBe(0)
    })

    it('delivers every message exactly once with 2 workers on one port and one store', async () => {
      expect(shared.stdout()).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+ \(.*, 2 workers\)\n/)
      const sent = await sendBatches(url, 20, 10, 'once')
      const mine = () => receivedIds(to).filter((id) => id.startsWith('once-'))
      await waitFor(() => (new Set(mine()).size === sent.length ? true : undefined), 'every message delivered')
      // Nothing pending any more: no delivery is left that could still be sent a second time.
      await waitFor(async () => {
        const { body } = await adminGet(`${url}/v1/deliveries?status=pending`)
        return body.deliveries.length === 0 ? true : undefined
      }, 'no pending delivery')
      expect(mine().sort()).toEqual([...sent].sort())
    })

    it("charts the relay's last hour on the page, every worker's, whichever worker draws it", async () => {
      const client = new PageClient(url, { newConnectionEach: true })
      await client.signIn()
      // The Ingested chart's bars, one a minute: their values add up to what the relay took in.
      const charted = async () => {
        const page = await client.get('/')
        const values = [...page.body.matchAll(/<title>\d\d:\d\d UTC · (\d+) msg\/min<\/title>/g)]
        return values.reduce((sum, [, n]) => sum + Number(n), 0)
      }
      // What the cases before took in, counted alike whichever worker draws the page.
      const before = await charted()
      for (let i = 0; i < 4; i++) expect(await charted()).toBe(before)
      // Spread over both workers: a batch per new connection.
      const sent = await sendBatches(url, 12, 5, 'chart')
      for (let i = 0; i < 6; i++) expect((await charted()) - before).toBe(sent.length)
    })

    it('keeps a sign-in on every worker: the page and its forms work through either', async () => {
      // Each request on a new connection: the primary hands connections to the workers in turn.
      const client = new PageClient(url, { newConnectionEach: true })
      expect((await client.signIn()).status).toBe(303)
      for (let i = 0; i < 8; i++) {
        const page = await client.get('/')
        expect(page.status).toBe(200)
        expect(page.body).not.toContain('action="/ui/sign-in"')
      }
      const endpoints = await client.get('/ui/endpoints')
      const action = /action="(\/ui\/endpoints\/[^/"]+)\/pause"/.exec(endpoints.body)![1]!
      const csrf = PageClient.csrfOf(endpoints.body)
      for (let i = 0; i < 6; i++) {
        const done = await client.post(`${action}/${i % 2 === 0 ? 'pause' : 'resume'}`, { csrf })
        expect(done.status).toBe(303)
      }
      // Both workers took forms of that one session.
      await waitFor(
        () =>
          /\[worker 1\] endpoint .* by an operator/.test(shared.stderr()) &&
          /\[worker 2\] endpoint .* by an operator/.test(shared.stderr())
            ? true
            : undefined,
        'both workers to log a pause or resume',
      )
      expect((await client.post('/ui/sign-out', { csrf })).status).toBe(303)
      for (let i = 0; i < 4; i++) expect((await client.get('/')).body).toContain('action="/ui/sign-in"')
    })
  })

  it('restarts a worker killed with SIGKILL, and every acknowledged message still arrives', async () => {
    // The least lease: the work of the killed worker is taken up by the others soon.
    const config = await configFor(kind, 1000)
    const run = startTracklet(cli.path, ['relay', '--config', config, '--workers', '2'])
    const url = await listeningUrl(run)
    const before = await waitFor(() => (workerPids(run).size === 2 ? workerPids(run) : undefined), 'two workers')
    const killed = before.get(1)!

    const first = await sendBatches(url, 10, 10, 'before')
    process.kill(killed, 'SIGKILL')
    const restarted = await waitFor(() => {
      const pid = workerPids(run).get(1)
      return pid !== undefined && pid !== killed ? pid : undefined
    }, 'worker 1 to be restarted')
    expect(run.stderr()).toContain(`warn  worker 1 (pid ${killed}) died (SIGKILL): restarting in`)
    expect(isRunning(killed)).toBe(false)
    expect(isRunning(restarted)).toBe(true)
    expect(isRunning(before.get(2)!)).toBe(true)

    const second = await sendBatches(url, 10, 10, 'after')
    // At least once: a delivery in flight in the killed worker may be sent again, never lost.
    await waitFor(() => {
      const received = new Set(receivedIds())
      return [...first, ...second].every((id) => received.has(id)) ? true : undefined
    }, 'every acknowledged message delivered')
  })

  it('stops every worker on SIGTERM to the primary, and exits 0', async () => {
    const run = startTracklet(cli.path, ['relay', '--config', await configFor(kind), '--workers', '2'])
    await listeningUrl(run)
    const pids = [...(await waitFor(() => (workerPids(run).size === 2 ? workerPids(run) : undefined))).values()]
    run.child.kill('SIGTERM')
    expect(await run.exited).toBe(0)
    expect(run.stdout()).toContain('tracklet relay: SIGTERM received, closing 2 workers\n')
    expect(run.stderr().match(/info {2}\[worker [12]\] closed/g)).toHaveLength(2)
    expect(pids.filter(isRunning)).toEqual([])
  })
})

describe('tracklet relay --workers: what it refuses', () => {
  it("refuses ':memory:', which no two processes can share, and opens nothing", async () => {
    receiver = await startReceiver()
    const config = writeConfig({ database: ':memory:', sources: [{ name: 'web', writeKey: WRITE_KEY }] })
    const refusal = `tracklet relay: --workers (workers): 3 workers need one store they all open: ":memory:" is a database of one process's own (use a SQLite file or a postgres:// URL)\n`
    const result = await runTracklet(cli.path, ['relay', '--config', config, '--workers', '3'])
    expect(result).toMatchObject({ code: 1, stderr: refusal })
    // --check says so too, rather than calling the config valid.
    const checked = await runTracklet(cli.path, ['relay', '--config', config, '--workers', '3', '--check'])
    expect(checked).toMatchObject({ code: 1, stdout: '', stderr: refusal })
  })

  it.each([
    [
      ['--workers', 'two'],
      2,
      'tracklet relay: --workers must be a whole number from 1 to 256, got "two" (see tracklet relay --help)\n',
    ],
    [['--workers', '0'], 1, 'tracklet relay: --workers (workers): must be an integer from 1 to 256, got number 0\n'],
  ])('refuses %j with a clear message', async (flags, code, message) => {
    receiver = await startReceiver()
    const config = writeConfig({ database: join(dir, 'never.db'), sources: [{ name: 'web', writeKey: WRITE_KEY }] })
    const result = await runTracklet(cli.path, ['relay', '--config', config, ...flags])
    expect(result).toMatchObject({ code, stderr: message })
  })

  it('prints each start-up warning once, not once per worker', async () => {
    receiver = await startReceiver()
    // No admin token, and a source with no destination: two warnings.
    const config = writeConfig({
      port: 0,
      database: join(dir, 'warned.db'),
      sources: [{ name: 'web', writeKey: WRITE_KEY }],
    })
    const run = startTracklet(cli.path, ['relay', '--config', config, '--workers', '3'])
    await listeningUrl(run)
    await waitFor(() => (workerPids(run).size === 3 ? true : undefined), 'all three workers to log their start')
    expect(run.stderr().match(/adminToken is not set/g)).toHaveLength(1)
    expect(run.stderr().match(/sources\[0\] \(web\) has no destination/g)).toHaveLength(1)
  })

  it('stops, and exits 1, when the workers cannot start (the port is taken)', async () => {
    receiver = await startReceiver()
    const port = Number(new URL(receiver.url).port)
    const config = writeConfig({
      port,
      database: join(dir, 'taken.db'),
      sources: [{ name: 'web', writeKey: WRITE_KEY }],
    })
    const result = await runTracklet(cli.path, ['relay', '--config', config, '--workers', '2'])
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/error worker \d \(pid \d+\) exited before it listened \(exit code 1\): stopping/)
    expect(result.stdout).toBe('')
  })
})
