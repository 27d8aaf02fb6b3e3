import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request } from 'undici'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { useCli } from '../support/cli-process'
import { basic, post, type Receiver, startReceiver, track, waitFor } from './helpers'
import { PageClient } from './console/page-client'

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

const dir = mkdtempSync(join(tmpdir(), 'tracklet-logs-'))
let child: ChildProcess | undefined
let receiver: Receiver

afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
})
afterEach(async () => {
  await receiver?.close()
})
const cli = useCli()

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
  // DEBUG would send the log through the debug package as well: these tests read the command's own lines.
  const relay = await cli.startRelay(['--config', path], { DEBUG: '', ...env })
  child = relay.child
  return { ...relay, stop: () => relay.child.kill('SIGTERM') }
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
  it('writes one JSON object per line and event with LOG_FORMAT=json, with its fields, never a secret nor a query string', async () => {
    const relay = await startRelayProcess({ LOG_FORMAT: 'json', LOG_LEVEL: 'debug' })
    await traffic(relay.url)
    await waitFor(() => (/dead-lettered/.test(relay.stderr()) ? true : undefined), 'the dead letter to be logged')
    relay.stop()
    expect(await relay.exited).toBe(0)

    const events = relay
      .stderr()
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { time: string; level: string; msg: string; [field: string]: unknown })
    const messages = events.map((e) => e.msg)
    expect(messages).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^listening on http:\/\/127\.0\.0\.1:\d+ with 1 source \(/),
        expect.stringMatching(/^POST \/v1\/track → 401 ERR_UNAUTHORIZED$/),
        expect.stringMatching(/^operator page: sign-in refused/),
        expect.stringMatching(/^operator page: signed in/),
        'closed',
      ]),
    )
    // A dead letter is a warning an operator should see; a retry is one line per attempt (debug),
    // its next attempt an ISO 8601 time; both carry what a log pipeline filters on.
    const deadLetter = events.find((e) => e.event === 'dead-lettered')
    expect(deadLetter).toMatchObject({
      level: 'warn',
      reason: 'not-retryable',
      source: 'web',
      deliveryId: expect.any(Number),
      messageId: expect.any(String),
      attempt: 1,
      msg: expect.stringMatching(
        /^delivery \d+ of source web dead-lettered: not retryable \(http:\/\/127\.0\.0\.1:\d+\/hook: HTTP 404\)$/,
      ),
    })
    const retry = events.find((e) => e.event === 'retry-scheduled')
    expect(retry).toMatchObject({ level: 'debug', source: 'web', attempt: 1 })
    expect(retry!.msg).toMatch(/HTTP 503\); next attempt at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    expect(events.find((e) => e.event === 'request-refused' && e.status === 401)).toMatchObject({ level: 'debug' })
    const output = relay.stdout() + relay.stderr()
    expect(output).not.toContain(MARK)
    expect(output).not.toContain('?token')
  })

  it('writes no line per message at the default level, but one per delivered message at debug', async () => {
    for (const [level, expected] of [
      [undefined, 0],
      ['debug', 20],
    ] as const) {
      const relay = await startRelayProcess({
        LOG_FORMAT: 'json',
        ...(level === undefined ? {} : { LOG_LEVEL: level }),
      })
      receiver.respond((_req, res) => void res.writeHead(200).end())
      const batch = Array.from({ length: 20 }, (_, i) => ({ ...track(), messageId: `m-${i}` }))
      expect((await post(`${relay.url}/v1/batch`, { batch }, { authorization: basic(config.writeKey) })).status).toBe(
        200,
      )
      await waitFor(() => (receiver.received.length >= 20 ? true : undefined), 'the 20 webhooks')
      relay.stop()
      expect(await relay.exited).toBe(0)
      const delivered = relay
        .stderr()
        .split('\n')
        .filter((line) => line.includes('"event":"delivered"'))
        .map((line) => JSON.parse(line))
      expect(delivered).toHaveLength(expected)
      for (const line of delivered)
        expect(line).toMatchObject({ level: 'debug', source: 'web', messageId: expect.stringMatching(/^m-/) })
      // afterEach closes the last receiver.
      if (level === undefined) await receiver.close()
    }
  })

  it('keeps ingesting and delivering while nobody reads its stderr (a log write never blocks the relay)', async () => {
    const relay = await startRelayProcess({ LOG_FORMAT: 'json', LOG_LEVEL: 'debug' })
    receiver.respond((_req, res) => void res.writeHead(200).end())
    // Stop reading: once the pipe's buffer (64 KiB) is full, a synchronous write to it would block
    // the whole relay, and no webhook would arrive.
    child!.stderr!.pause()
    const batches = 20
    for (let b = 0; b < batches; b++) {
      const batch = Array.from({ length: 100 }, (_, i) => ({ ...track(), messageId: `b${b}-${i}` }))
      expect((await post(`${relay.url}/v1/batch`, { batch }, { authorization: basic(config.writeKey) })).status).toBe(
        200,
      )
    }
    await waitFor(() => (receiver.received.length >= batches * 100 ? true : undefined), 'every webhook, stderr unread')
    child!.stderr!.resume()
    relay.stop()
    expect(await relay.exited).toBe(0)
    // Nothing was lost below the buffer's bound: every delivered line comes out once read again.
    const delivered = relay
      .stderr()
      .split('\n')
      .filter((line) => line.includes('"event":"delivered"'))
    expect(delivered).toHaveLength(batches * 100)
  })

  it('writes human-readable lines by default, and refuses an unknown LOG_FORMAT', async () => {
    const relay = await startRelayProcess({ LOG_LEVEL: 'debug' })
    await traffic(relay.url)
    relay.stop()
    expect(await relay.exited).toBe(0)
    const lines = relay
      .stderr()
      .split('\n')
      .filter((line) => line !== '')
    expect(lines.length).toBeGreaterThan(5)
    for (const line of lines) expect(line).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z (info |warn |error|debug) \S/)
    expect(relay.stdout() + relay.stderr()).not.toContain(MARK)

    const path = join(dir, 'any.json')
    writeFileSync(path, JSON.stringify({ sources: [{ name: 'web', writeKey: 'k' }] }))
    const refused = cli.run(['relay', '--config', path], { LOG_FORMAT: 'yaml' })
    expect(await refused.exited).toBe(2)
    expect(refused.stderr()).toContain('LOG_FORMAT must be text or json, got "yaml"')
  })
})
