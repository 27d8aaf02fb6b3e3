import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request } from 'undici'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import {
  ADMIN_TOKEN,
  admin,
  adminGet,
  basic,
  post,
  startReceiver,
  track,
  WRITE_KEY,
  waitForDelivery,
} from '../relay/helpers'
import { listeningUrl, startTracklet, stopAll, type TrackletProcess, useCli } from '../support/cli-process'
import { waitFor } from '../support/wait-for'

// What one client or one config path can cost a running relay, probed from outside as a prober
// would: the built command in a child process, real HTTP, a real signal. Each test waits for what
// the relay does; a relay whose event loop is held never answers, and the test fails on its wait.

afterEach(() => stopAll())
// After the file's own afterEach: a relay a failing test left held is killed before stopAll runs.
const cli = useCli()
const dir = mkdtempSync(join(tmpdir(), 'tracklet-relay-limits-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

let files = 0
function configFile(
  sources: Record<string, unknown>[],
  options: Record<string, unknown> = {},
): { path: string; base: Record<string, unknown> } {
  const path = join(dir, `relay-${++files}.json`)
  const base = {
    port: 0,
    database: ':memory:',
    adminToken: ADMIN_TOKEN,
    allowPrivateNetworks: true,
    sources,
    ...options,
  }
  writeFileSync(path, JSON.stringify(base))
  return { path, base }
}

function stderrLine(run: TrackletProcess, pattern: RegExp, count = 1): Promise<string> {
  return waitFor(
    () => {
      const lines = run
        .stderr()
        .split('\n')
        .filter((line) => pattern.test(line))
      return lines.length >= count ? lines.join('\n') : undefined
    },
    `${count} line(s) matching ${pattern}`,
    30_000,
  ).catch((error: Error) => {
    throw new Error(`${error.message}; the relay's stderr:\n${run.stderr()}`)
  })
}

describe("a tracking plan's pattern", () => {
  it('never stalls the relay: a probe V8 would backtrack on for days is answered, and /healthz with it', async () => {
    const config = configFile([
      {
        name: 'web',
        writeKey: WRITE_KEY,
        schema: {
          plan: {
            events: {
              Probe: { properties: { type: 'object', properties: { p: { type: 'string', pattern: '^(a+)+$' } } } },
            },
          },
          violations: 'block',
        },
      },
    ])
    const run = startTracklet(cli.path, ['relay', '--config', config.path])
    const url = await listeningUrl(run)
    // With V8's backtracking RegExp each `a` doubles the time (28 took 1.5–12 s): 40 is days.
    const probe = track({ event: 'Probe', properties: { p: `${'a'.repeat(40)}!` } })
    const sent = post(`${url}/v1/track`, probe, { authorization: basic(WRITE_KEY) })
    const health = request(`${url}/healthz`)
    expect((await sent).status).toBe(200)
    expect((await health).statusCode).toBe(200)
    const { body } = await adminGet(`${url}/v1/violations?source=web`)
    expect(body.violations).toMatchObject([{ event: 'Probe', path: '/properties/p' }])
  })
})

describe('a SIGHUP whose config path is not a regular file', () => {
  const hangUp = async (sources: Record<string, unknown>[]) => {
    const config = configFile(sources)
    const run = startTracklet(cli.path, ['relay', '--config', config.path])
    await listeningUrl(run)
    return { run, config }
  }
  const web = { name: 'web', writeKey: WRITE_KEY }

  it('refuses a FIFO nobody writes at once, and the next reload is served', async () => {
    const { run, config } = await hangUp([web])
    rmSync(config.path)
    execFileSync('mkfifo', [config.path])
    run.child.kill('SIGHUP')
    expect(await stderrLine(run, /config reload refused/)).toMatch(/it is a FIFO, not a regular file/)

    rmSync(config.path)
    writeFileSync(config.path, JSON.stringify({ ...config.base, sources: [web, { name: 'app', writeKey: 'wk-app' }] }))
    run.child.kill('SIGHUP')
    await stderrLine(run, /config reloaded: 1 source added \(app\)/)
  })

  it('refuses /dev/zero without reading it', async () => {
    const { run, config } = await hangUp([web])
    rmSync(config.path)
    symlinkSync('/dev/zero', config.path)
    run.child.kill('SIGHUP')
    expect(await stderrLine(run, /config reload refused/)).toMatch(/it is a character device, not a regular file/)
    expect(run.child.exitCode).toBeNull()
  })
})

// The most the relay process's resident memory may have grown (its peak, VmHWM) while running
// functions that allocate without end under functionMemory 16: the sandbox's 16 MB of its own,
// the function's 16 MB, a worker thread and the WebAssembly module (measured: 28 MB here, 49–57 MB
// in a process running other sandboxes). Before functionMemory held, one such call grew it by
// 524–777 MB, and up to 2 GB.
const FUNCTION_MEMORY_MB = 16
const MOST_GROWTH_MB = 96

describe('functionMemory, as the relay process grows', () => {
  const peakMb = (pid: number) => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024
  const ALLOCATES = 'function onTrack() { const keep = []; for (;;) keep.push(new Uint8Array(1e6)) }'

  it.runIf(process.platform === 'linux')(
    'bounds a call allocating typed arrays, in a delivery and in POST /v1/functions/test',
    async () => {
      const receiver = await startReceiver()
      try {
        const config = configFile(
          [
            {
              name: 'web',
              writeKey: WRITE_KEY,
              destinations: { Webhooks: { webhooks: [{ url: receiver.url }], function: { code: ALLOCATES } } },
            },
          ],
          { functionMemory: FUNCTION_MEMORY_MB, functionTimeout: 60_000 },
        )
        const run = startTracklet(cli.path, ['relay', '--config', config.path])
        const url = await listeningUrl(run)
        const pid = run.child.pid!
        const before = peakMb(pid)
        const message = track()
        expect((await post(`${url}/v1/track`, message, { authorization: basic(WRITE_KEY) })).status).toBe(200)
        const failed = await waitForDelivery(url, 'failed', message['messageId'] as string)
        expect(failed.lastError).toContain('ERR_FUNCTION_MEMORY')
        const tested = await post(`${url}/v1/functions/test`, { code: ALLOCATES, events: [track()] }, admin)
        expect(tested.body.results[0].error).toContain('ERR_FUNCTION_MEMORY')
        const grown = peakMb(pid) - before
        console.log(`relay peak RSS grew ${grown.toFixed(0)} MB under functionMemory ${FUNCTION_MEMORY_MB}`)
        expect(grown).toBeLessThan(MOST_GROWTH_MB)
        expect(receiver.received).toEqual([])
      } finally {
        await receiver.close()
      }
    },
    120_000,
  )
})
