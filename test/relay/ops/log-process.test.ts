import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request } from 'undici'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { buildCli } from '../../support/build-cli'
import { basic, post, type Receiver, startReceiver, track, waitFor } from '../helpers'
import { PageClient } from './page-client'

// Every secret below holds this word: the captured output must not.
const MARK = 'S3CRET'
const config = {
  writeKey: `wk-${MARK}-web`,
  adminToken: `admin-${MARK}-token`,
  metricsToken: `metrics-${MARK}-token`,
  sharedSecret: `shared-${MARK}-signing`,
  urlToken: `url-${MARK}-token`,
  headerKey: `header-${MARK}-api-key`,
}

let cli: string
let removeCli: () => Promise<void>
const dir = mkdtempSync(join(tmpdir(), 'tracklet-logs-'))
let child: ChildProcess | undefined
let receiver: Receiver

beforeAll(async () => {
  ;({ cliPath: cli, remove: removeCli } = await buildCli())
}, 60_000)
afterAll(async () => {
  await removeCli()
  rmSync(dir, { recursive: true, force: true })
})
afterEach(async () => {
  if (child?.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  await receiver?.close()
})

/** Runs `tracklet relay` with every secret in its config; resolves with its URL and output. */
async function startRelayProcess(env: Record<string, string>) {
  receiver = await startReceiver()
  const path = join(dir, `config-${Math.random().toString(36).slice(2)}.json`)
  writeFileSync(
    path,
    JSON.stringify({
      port: 0,
      database: ':memory:',
      adminToken: config.adminToken,
      metricsToken: config.metricsToken,
      allowPrivateNetworks: true,
      sources: [
        {
          name: 'web',
          writeKey: config.writeKey,
          destinations: {
            Webhooks: {
              webhooks: [
                { url: `${receiver.url}?token=${config.urlToken}`, headers: { 'X-Api-Key': config.headerKey } },
              ],
              sharedSecret: config.sharedSecret,
            },
          },
        },
      ],
    }),
  )
  const { DEBUG: _debug, ...inherited } = process.env
  const started = spawn(process.execPath, [cli, 'relay', '--config', path], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...inherited, ...env },
  })
  child = started
  let stdout = ''
  let stderr = ''
  started.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
  started.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = new Promise<number | null>((resolve) => started.once('exit', resolve))
  const url = await waitFor(() => /listening on (http:\/\/\S+)/.exec(stdout)?.[1], 'the relay to print its URL')
  return { url, exited, stdout: () => stdout, stderr: () => stderr, stop: () => started.kill('SIGTERM') }
}

// Traffic that handles every secret: ingest with the right and a wrong write key, a webhook that
// refuses (its URL carries a token) and one that fails for a while, the admin API and /metrics with
// right and wrong tokens, a token in a query string, sign-in to the page with a wrong and the right token.
async function traffic(url: string): Promise<void> {
  receiver.respond((_req, res) => {
    const event = receiver.received.at(-1)?.body['event']
    res.writeHead(event === 'Busy' ? 503 : 404, { 'retry-after': '3600' }).end()
  })
  const key = { authorization: basic(config.writeKey) }
  expect((await post(`${url}/v1/track`, track({ event: 'Gone' }), key)).status).toBe(200)
  expect((await post(`${url}/v1/track`, track({ event: 'Busy' }), key)).status).toBe(200)
  expect((await post(`${url}/v1/track`, track(), { authorization: basic(`wrong-${MARK}-key`) })).status).toBe(401)
  expect((await post(`${url}/v1/batch`, { batch: [{ type: 'track' }] }, key)).status).toBe(400)
  for (const [path, token] of [
    ['/v1/deliveries', config.adminToken],
    ['/v1/deliveries', `wrong-${MARK}-admin`],
    [`/v1/deliveries?token=${MARK}-in-query`, config.adminToken],
    ['/metrics', config.metricsToken],
    ['/metrics', `wrong-${MARK}-metrics`],
  ] as const) {
    await (await request(`${url}${path}`, { headers: { authorization: `Bearer ${token}` } })).body.dump()
  }
  const page = new PageClient(url)
  expect((await page.signIn(`guess-${MARK}-token`)).status).toBe(401)
  expect((await page.signIn(config.adminToken)).status).toBe(303)
  await waitFor(() => (receiver.received.length >= 2 ? true : undefined), 'both webhooks to be attempted')
}

describe('tracklet relay’s log', () => {
  it('writes one JSON object per line and event with LOG_FORMAT=json, never a secret nor a query string', async () => {
    const relay = await startRelayProcess({ LOG_FORMAT: 'json' })
    await traffic(relay.url)
    await waitFor(() => (/dead-lettered/.test(relay.stderr()) ? true : undefined), 'the dead letter to be logged')
    relay.stop()
    expect(await relay.exited).toBe(0)

    const events = relay
      .stderr()
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { time: string; level: string; msg: string })
    const messages = events.map((e) => e.msg)
    expect(messages).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^listening on http:\/\/127\.0\.0\.1:\d+ with 1 sources/),
        expect.stringMatching(/^POST \/v1\/track → 401 ERR_UNAUTHORIZED$/),
        expect.stringMatching(
          /^delivery \d+ of source web dead-lettered: not retryable \(http:\/\/127\.0\.0\.1:\d+\/hook: HTTP 404\)$/,
        ),
        expect.stringMatching(
          /^delivery \d+ of source web failed \(http:\/\/127\.0\.0\.1:\d+\/hook: HTTP 503\); next attempt at/,
        ),
        expect.stringMatching(/^operator page: sign-in refused/),
        expect.stringMatching(/^operator page: signed in/),
        'closed',
      ]),
    )
    for (const event of events) expect(event.level).toMatch(/^(info|warn|error)$/)
    const output = relay.stdout() + relay.stderr()
    expect(output).not.toContain(MARK)
    expect(output).not.toContain('?token')
  })

  it('writes human-readable lines by default, and refuses an unknown LOG_FORMAT', async () => {
    const relay = await startRelayProcess({})
    await traffic(relay.url)
    relay.stop()
    expect(await relay.exited).toBe(0)
    const lines = relay
      .stderr()
      .split('\n')
      .filter((line) => line !== '')
    expect(lines.length).toBeGreaterThan(5)
    for (const line of lines) expect(line).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z (info |warn |error) \S/)
    expect(relay.stdout() + relay.stderr()).not.toContain(MARK)

    const path = join(dir, 'any.json')
    writeFileSync(path, JSON.stringify({ sources: [{ name: 'web', writeKey: 'k' }] }))
    const refused = spawn(process.execPath, [cli, 'relay', '--config', path], {
      env: { ...process.env, LOG_FORMAT: 'yaml' },
    })
    let output = ''
    refused.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
    expect(await new Promise((resolve) => refused.once('exit', resolve))).toBe(2)
    expect(output).toContain('LOG_FORMAT must be text or json, got "yaml"')
  })
})
