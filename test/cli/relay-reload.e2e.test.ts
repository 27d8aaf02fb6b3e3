import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ADMIN_TOKEN, basic, post, type Receiver, startReceiver, track, WRITE_KEY } from '../relay/helpers'
import { listeningUrl, startTracklet, stopAll, type TrackletProcess, useCli } from '../support/cli-process'
import { waitFor } from '../support/wait-for'

// `tracklet relay --config FILE` reloading its file on SIGHUP (docs/relay.md, "Reloading the
// config file"), as an operator runs it: the built command in a child process, its file edited
// and the signal sent; each test waits for what the relay does, never for a fixed time.

const cli = useCli()
const dir = mkdtempSync(join(tmpdir(), 'tracklet-relay-reload-'))
const APP_KEY = 'wk-test-app'
let receiver: Receiver
let alerts: Receiver
let formerAlerts: Receiver

beforeEach(async () => {
  receiver = await startReceiver()
  // A message of event `Gone` is refused for good: a dead letter, which alerts.
  receiver.respond((_req, res) => {
    res.writeHead(receiver.received.at(-1)?.body['event'] === 'Gone' ? 404 : 200).end()
  })
  alerts = await startReceiver()
  formerAlerts = await startReceiver()
})
afterEach(async () => {
  await stopAll()
  await Promise.all([receiver.close(), alerts.close(), formerAlerts.close()])
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

let files = 0
/** A config file of its own for each test, with one source `web`; `edit` changes it in place. */
function configFile(database: string): {
  path: string
  write(config: Record<string, unknown>): void
  base: Record<string, unknown>
} {
  const path = join(dir, `relay-${++files}.json`)
  const base = {
    port: 0,
    database,
    adminToken: ADMIN_TOKEN,
    allowPrivateNetworks: true,
    alerts: { url: formerAlerts.url },
    sources: [{ name: 'web', writeKey: WRITE_KEY, destinations: { Webhooks: { webhooks: [{ url: receiver.url }] } } }],
  }
  const write = (config: Record<string, unknown>) => writeFileSync(path, JSON.stringify(config))
  write(base)
  return { path, write, base }
}

const appSource = () => ({
  name: 'app',
  writeKey: APP_KEY,
  destinations: { Webhooks: { webhooks: [{ url: receiver.url }] } },
})

const send = (url: string, key: string, body = track()) => post(`${url}/v1/track`, body, { authorization: basic(key) })

/** Waits until `pattern` has matched `count` lines of the process's stderr, and returns those lines. */
function linesMatching(run: TrackletProcess, pattern: RegExp, count = 1): Promise<string[]> {
  // Generous: the machine running the tests may be busy; the wait ends as soon as the line is there.
  return waitFor(
    () => {
      const lines = run
        .stderr()
        .split('\n')
        .filter((line) => pattern.test(line))
      return lines.length >= count ? lines : undefined
    },
    `${count} line(s) matching ${pattern}`,
    30_000,
  ).catch((error: Error) => {
    throw new Error(`${error.message}; the relay's stderr:\n${run.stderr()}`)
  })
}

describe('tracklet relay, on SIGHUP', () => {
  it("applies a valid file whole: a new source's key accepted, a removed one's refused, alerts sent to the new URL", async () => {
    const config = configFile(':memory:')
    const run = startTracklet(cli.path, ['relay', '--config', config.path])
    const url = await listeningUrl(run)
    expect((await send(url, APP_KEY)).status).toBe(401)

    config.write({ ...config.base, alerts: { url: alerts.url }, sources: [config.base.sources, appSource()].flat() })
    run.child.kill('SIGHUP')
    await linesMatching(run, /info\s+config reloaded: 1 source added \(app\), alerts changed/)
    expect((await send(url, APP_KEY)).status).toBe(200)
    expect((await send(url, WRITE_KEY, track({ event: 'Gone' }))).status).toBe(200)
    await waitFor(() => alerts.received.find((r) => r.body['event'] === 'delivery.failed'), 'the alert at the new URL')
    expect(formerAlerts.received).toEqual([])

    config.write({ ...config.base, sources: [appSource()] })
    run.child.kill('SIGHUP')
    await linesMatching(run, /info\s+config reloaded: 1 source removed \(web\), alerts changed/)
    expect((await send(url, WRITE_KEY)).status).toBe(401)
    expect((await send(url, APP_KEY)).status).toBe(200)
    // Still running, after both reloads.
    expect(run.child.exitCode).toBeNull()
  })

  it('refuses an invalid file, logging every problem at error, and keeps serving the running config', async () => {
    const config = configFile(':memory:')
    const run = startTracklet(cli.path, ['relay', '--config', config.path])
    const url = await listeningUrl(run)

    config.write({
      ...config.base,
      webhookTimeout: 'soon',
      sources: [config.base.sources, { name: 'app', destinations: {} }].flat(),
    })
    run.child.kill('SIGHUP')
    await linesMatching(run, /error config reload refused: the running config stays/)
    const refused = run.stderr()
    expect(refused).toMatch(/error config reload refused: webhookTimeout: .*\(in .*relay-\d+\.json\)/)
    expect(refused).toMatch(/error config reload refused: sources\[1\]\.writeKey: .*\(in .*relay-\d+\.json\)/)
    expect((await send(url, WRITE_KEY)).status).toBe(200)

    // A file that is not JSON at all: refused too, the relay still up.
    writeFileSync(config.path, '{ "sources": [')
    run.child.kill('SIGHUP')
    await linesMatching(run, /error config reload refused: the running config stays/, 2)
    expect(run.stderr()).toMatch(/error config reload refused: .*is not valid JSON/)
    expect((await send(url, WRITE_KEY)).status).toBe(200)
    expect((await send(url, APP_KEY)).status).toBe(401)
  })

  it('logs a change of another option at warn as needing a restart, and does not apply it', async () => {
    const config = configFile(':memory:')
    const run = startTracklet(cli.path, ['relay', '--config', config.path])
    const url = await listeningUrl(run)

    config.write({ ...config.base, adminToken: 'a-new-admin-token', webhookTimeout: 9000 })
    run.child.kill('SIGHUP')
    await linesMatching(
      run,
      /warn\s+config reload: adminToken, webhookTimeout changed, which need a restart: not applied/,
    )
    await linesMatching(run, /info\s+config reloaded: no source or alerts change/)
    expect(run.output()).not.toContain('a-new-admin-token')
    const asAdmin = (token: string) => fetch(`${url}/v1/deliveries`, { headers: { authorization: `Bearer ${token}` } })
    expect((await asAdmin(ADMIN_TOKEN)).status).toBe(200)
    expect((await asAdmin('a-new-admin-token')).status).toBe(401)
  })

  it('with --workers 2, passes the reload on to both workers, and a worker started later runs the reloaded file', async () => {
    const config = configFile(join(dir, `workers-${files + 1}.db`))
    const run = startTracklet(cli.path, ['relay', '--config', config.path, '--workers', '2'])
    const url = await listeningUrl(run)
    const listening = await linesMatching(run, /worker \d listening \(pid \d+\)/, 2)

    config.write({ ...config.base, sources: [appSource()], webhookTimeout: 9000 })
    run.child.kill('SIGHUP')
    // Each worker applies it (its lines name it); the primary warns once for all.
    await linesMatching(run, /\[worker 1\] config reloaded: 1 source added \(app\), 1 source removed \(web\)/)
    await linesMatching(run, /\[worker 2\] config reloaded: 1 source added \(app\), 1 source removed \(web\)/)
    expect(run.stderr().match(/webhookTimeout changed, which needs a restart/g)).toHaveLength(1)
    // Fresh connections, handed to the workers in turn: every one answers with the reloaded sources.
    for (let i = 0; i < 6; i++) {
      expect(
        (await post(`${url}/v1/track`, track(), { authorization: basic(APP_KEY), connection: 'close' })).status,
      ).toBe(200)
      expect(
        (await post(`${url}/v1/track`, track(), { authorization: basic(WRITE_KEY), connection: 'close' })).status,
      ).toBe(401)
    }

    // A worker that dies is started again with the file as reloaded, not as it was at start.
    const pid = Number(/pid (\d+)/.exec(listening[0]!)?.[1])
    process.kill(pid, 'SIGKILL')
    await linesMatching(run, /worker \d restarted \(pid \d+\)/)
    for (let i = 0; i < 6; i++) {
      expect(
        (await post(`${url}/v1/track`, track(), { authorization: basic(APP_KEY), connection: 'close' })).status,
      ).toBe(200)
      expect(
        (await post(`${url}/v1/track`, track(), { authorization: basic(WRITE_KEY), connection: 'close' })).status,
      ).toBe(401)
    }
  })

  it('with --workers 2, an invalid file is refused once by the primary and no worker changes', async () => {
    const config = configFile(join(dir, `workers-${files + 1}.db`))
    const run = startTracklet(cli.path, ['relay', '--config', config.path, '--workers', '2'])
    const url = await listeningUrl(run)
    await linesMatching(run, /worker \d listening \(pid \d+\)/, 2)

    config.write({ ...config.base, sources: [{ name: 'app' }] })
    run.child.kill('SIGHUP')
    await linesMatching(run, /error config reload refused: the running config stays/)
    expect(run.stderr()).toMatch(/error config reload refused: sources\[0\]\.writeKey: /)
    expect(run.stderr()).not.toMatch(/\[worker \d\] config reload/)
    for (let i = 0; i < 4; i++) {
      expect(
        (await post(`${url}/v1/track`, track(), { authorization: basic(WRITE_KEY), connection: 'close' })).status,
      ).toBe(200)
    }
  })
})
