import { execFile } from 'node:child_process'
import { once } from 'node:events'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest'

// The real command, built as `npm run build` builds it, run as a user runs it, against a real
// HTTP receiver: what the platform's cross-library tester does.

const WRITE_KEY = 'wk_e2e_secret_4f1c'

interface Received {
  method: string | undefined
  url: string | undefined
  headers: IncomingHttpHeaders
  body: { batch: Array<Record<string, unknown>>; sentAt: string }
}

/** The command built once for the run (test/support/cli-global-setup.ts). */
const cliPath = inject('cliPath')
let server: Server
let endpoint: string
let received: Received[] = []
let answerStatus = 200
/** When set, the receiver reads the request and never answers it. */
let hang = false

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      if (hang) return
      received.push({
        method: req.method,
        url: req.url,
        headers: req.headers,
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
      })
      res
        .writeHead(answerStatus, { 'content-type': 'application/json' })
        .end(answerStatus === 200 ? '{}' : '{"error":"bad batch"}')
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(async () => {
  server?.closeAllConnections()
  server?.close()
})

beforeEach(() => {
  received = []
  answerStatus = 200
  hang = false
})

/** `tracklet send ARGS` (or, with `command: []`, `tracklet ARGS`), with `extraEnv` over a clean environment. */
function runCli(
  args: string[],
  extraEnv: Record<string, string> = {},
  command: string[] = ['send'],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env }
  delete env['DEBUG']
  delete env['TRACKLET_WRITE_KEY']
  delete env['TRACKLET_ENDPOINT']
  Object.assign(env, extraEnv)
  return new Promise((resolve) => {
    execFile(process.execPath, [cliPath, ...command, ...args], { env }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1
      resolve({ code, stdout, stderr })
    })
  })
}

describe('tracklet send (the built command)', () => {
  it('sends one track message, says the endpoint accepted it, and exits 0', async () => {
    const result = await runCli([
      `--writeKey=${WRITE_KEY}`,
      '--type=track',
      '--userId=u-42',
      '--event=Order Completed',
      '--properties={"revenue":"9.99","items":2}',
      '--context={"ip":"203.0.113.9"}',
      '--integrations={"All":false,"Webhooks":true}',
      '--timestamp=2026-01-02T03:04:05.678Z',
      `--endpoint=${endpoint}`,
    ])

    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    // Accepted, not "delivered": delivery to webhooks is the relay's, later.
    expect(result.stdout).toBe(
      `tracklet send: track ${String(received[0]?.body.batch[0]?.['messageId'])} accepted by ${endpoint}\n`,
    )
    expect(received).toHaveLength(1)
    const [request] = received
    expect(request).toMatchObject({
      method: 'POST',
      url: '/v1/batch',
      headers: {
        authorization: `Basic ${Buffer.from(`${WRITE_KEY}:`).toString('base64')}`,
        'content-type': expect.stringMatching(/^application\/json/),
      },
    })
    expect(request?.body.batch).toEqual([
      expect.objectContaining({
        type: 'track',
        userId: 'u-42',
        event: 'Order Completed',
        properties: { revenue: '9.99', items: 2 },
        integrations: { All: false, Webhooks: true },
        timestamp: '2026-01-02T03:04:05.678Z',
        messageId: expect.any(String),
        context: expect.objectContaining({
          ip: '203.0.113.9',
          library: { name: 'tracklet', version: expect.any(String) },
        }),
      }),
    ])
    expect(result.stdout).toContain(String(request?.body.batch[0]?.['messageId']))
  })

  it('runs send when no command is given, as the cross-library tester calls the binary', async () => {
    const result = await runCli(
      [`--writeKey=${WRITE_KEY}`, '--type=track', '--userId=u', '--event=Tested', `--endpoint=${endpoint}`],
      {},
      [],
    )
    expect(result.code).toBe(0)
    expect(received.map((request) => request.body.batch[0]?.event)).toEqual(['Tested'])
  })

  it('takes --flag value as well as --flag=value', async () => {
    const result = await runCli([
      '--writeKey',
      WRITE_KEY,
      '--type',
      'group',
      '--anonymousId',
      'a-1',
      '--groupId',
      'acme',
      '--traits',
      '{"employees":120}',
      '--endpoint',
      endpoint,
    ])

    expect(result.code).toBe(0)
    expect(received.map((request) => request.body.batch)).toEqual([
      [expect.objectContaining({ type: 'group', anonymousId: 'a-1', groupId: 'acme', traits: { employees: 120 } })],
    ])
  })

  it('exits non-zero, saying why, when the receiver refuses the batch', async () => {
    answerStatus = 400
    const result = await runCli([
      `--writeKey=${WRITE_KEY}`,
      '--type=identify',
      '--userId=u-1',
      `--endpoint=${endpoint}`,
    ])

    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/^tracklet send: the identify message was not accepted: .*400/)
    expect(result.stderr).toContain('ERR_DELIVERY')
    // The receiver's own reason, from its JSON answer, in the SDK's error.
    expect(result.stderr).toMatch(/: HTTP 400: bad batch \(ERR_DELIVERY\)\n$/)
    expect(result.stdout).toBe('')
    expect(received).toHaveLength(1) // a 400 is not retried
    expect(result.stderr + result.stdout).not.toContain(WRITE_KEY)
  })

  it('exits 2 and names the flag when an argument is bad, sending nothing', async () => {
    const badJson = await runCli([
      `--writeKey=${WRITE_KEY}`,
      '--type=track',
      '--userId=u',
      '--event=E',
      '--properties={"a":',
      `--endpoint=${endpoint}`,
    ])
    expect(badJson.code).toBe(2)
    expect(badJson.stderr).toMatch(/^tracklet send: --properties is not valid JSON/)

    const badType = await runCli([`--writeKey=${WRITE_KEY}`, '--type=click', '--userId=u', `--endpoint=${endpoint}`])
    expect(badType.code).toBe(2)
    expect(badType.stderr).toMatch(
      /^tracklet send: unknown --type "click": use one of identify, track, page, screen, group, alias \(see tracklet send --help\)\n/,
    )

    const noKey = await runCli(['--type=track', '--userId=u', '--event=E', `--endpoint=${endpoint}`])
    expect(noKey.code).toBe(2)
    expect(noKey.stderr).toMatch(/^tracklet send: --writeKey is required/)

    const unknownFlag = await runCli([`--writeKey=${WRITE_KEY}`, '--type=track', '--userId=u', '--event=E', '--bogus'])
    expect(unknownFlag.code).toBe(2)
    // One line on stderr, pointing at --help; nothing on stdout.
    expect(unknownFlag.stderr).toBe('tracklet send: unknown flag --bogus (see tracklet send --help)\n')
    expect(unknownFlag.stdout).toBe('')

    expect(received).toEqual([])
    expect(badJson.stderr + badType.stderr + unknownFlag.stderr).not.toContain(WRITE_KEY)
  })

  it('gives up after --timeout when the endpoint never answers, saying it timed out', async () => {
    hang = true
    const result = await runCli([
      `--writeKey=${WRITE_KEY}`,
      '--type=track',
      '--userId=u',
      '--event=E',
      '--timeout=300',
      `--endpoint=${endpoint}`,
    ])
    expect(result.code).toBe(1)
    expect(result.stderr).toBe(
      'tracklet send: the track message timed out after 300 ms (--timeout) before the endpoint accepted it\n',
    )
    expect(result.stdout).toBe('')
  })

  it('bounds the SDK retries too: an endpoint answering 503 fails at --timeout, not after a minute of retries', async () => {
    answerStatus = 503
    const result = await runCli([
      `--writeKey=${WRITE_KEY}`,
      '--type=identify',
      '--userId=u',
      '--timeout=1500',
      `--endpoint=${endpoint}`,
    ])
    expect(result.code).toBe(1)
    // Each retry is said as it starts, then the outcome.
    expect(result.stderr).toMatch(/^tracklet send: attempt 1 failed \(HTTP 503\); retrying \(attempt 2\)\n/)
    expect(result.stderr).toMatch(
      /\ntracklet send: the identify message timed out after 1500 ms \(--timeout\)[^\n]*\n$/,
    )
    // It was retried (the SDK's policy) until the deadline, never past it: the test's own
    // 20-second limit would fail first, as the retries alone may last 60 seconds.
    expect(received.length).toBeGreaterThan(1)
  })

  it('refuses a --timeout that is not a positive whole number of milliseconds', async () => {
    const result = await runCli([`--writeKey=${WRITE_KEY}`, '--type=identify', '--userId=u', '--timeout=1.5s'])
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(
      /^tracklet send: --timeout must be a whole number of milliseconds from 1 to \d+, got "1.5s" \(see tracklet send --help\)\n/,
    )
  })

  it('keeps messages readable with a 1- or 2-character write key, redacting it only as a value', async () => {
    for (const key of ['e', 'ti']) {
      const badType = await runCli([`--writeKey=${key}`, '--type=click', '--userId=u', `--endpoint=${endpoint}`])
      expect(badType.stderr).toMatch(
        /^tracklet send: unknown --type "click": use one of identify, track, page, screen, group, alias \(see tracklet send --help\)\n/,
      )
      const stray = await runCli(['--writeKey', key, key, '--type=track'])
      expect(stray.stderr).toMatch(/^tracklet send: Unexpected argument '\[write key\]'/)
      expect(stray.stderr).not.toContain(`'${key}'`)
    }
    answerStatus = 400
    const refused = await runCli(['--writeKey=e', '--type=identify', '--userId=u', `--endpoint=${endpoint}`])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(
      /^tracklet send: the identify message was not accepted: delivery failed: POST http:\/\/127\.0\.0\.1:\d+\/v1\/batch: HTTP 400: bad batch \(ERR_DELIVERY\)\n$/,
    )
  })

  it('prints its usage with --help and exits 0', async () => {
    const result = await runCli(['--help'])
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/^usage: tracklet send --writeKey=KEY --type=TYPE/)
    expect(result.stdout).toContain('identify | track | page | screen | group | alias')
    expect(result.stderr).toBe('')
    // Every flag, each with its default (or said to be required).
    const flags: Array<[string, string]> = [
      ['--writeKey KEY', 'required; default: $TRACKLET_WRITE_KEY'],
      ['--type TYPE', 'required'],
      ['--endpoint URL', 'default: $TRACKLET_ENDPOINT, else https://api.segment.io'],
      ['--timeout MS', 'default: 30000'],
      ['--messageId ID', 'default: a random UUID'],
      ['--timestamp TIME', 'default: now'],
      ['--context JSON', 'default: {}'],
      ['--integrations JSON', 'default: none'],
    ]
    for (const [flag, note] of flags)
      expect(result.stdout).toMatch(new RegExp(`\\n  ${escapeRegExp(flag)} .*${escapeRegExp(note)}`))
    for (const flag of [
      'userId',
      'anonymousId',
      'event',
      'name',
      'category',
      'groupId',
      'previousId',
      'properties',
      'traits',
    ]) {
      expect(result.stdout).toContain(`--${flag} `)
    }
  })
})

describe('tracklet send: what a user gets told', () => {
  it('takes the kebab-case spelling of every camelCase flag', async () => {
    const result = await runCli([
      `--write-key=${WRITE_KEY}`,
      '--type=alias',
      '--user-id=u-2',
      '--previous-id',
      'anon-2',
      '--message-id=m-kebab',
      `--endpoint=${endpoint}`,
    ])
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(received[0]?.body.batch[0]).toMatchObject({
      type: 'alias',
      userId: 'u-2',
      previousId: 'anon-2',
      messageId: 'm-kebab',
    })
  })

  it('answers a misspelt flag with one line naming the nearest one, never the value given with it', async () => {
    const misspelt = await runCli([`--writekey=${WRITE_KEY}`, '--type=track', '--userId=u', '--evnt=E'])
    expect(misspelt.code).toBe(2)
    expect(misspelt.stderr).toBe(
      'tracklet send: unknown flag --writekey (did you mean `--writeKey`?) (see tracklet send --help)\n',
    )
    const kebab = await runCli([`--write-key=${WRITE_KEY}`, '--type=track', '--user-idd=u', '--event=E'])
    expect(kebab.stderr).toBe(
      'tracklet send: unknown flag --user-idd (did you mean `--user-id`?) (see tracklet send --help)\n',
    )
    expect(received).toEqual([])
  })

  it("shows the relay's own reason when it refuses the write key", async () => {
    const { createRelay } = await import('../../src/relay/index')
    const relay = await createRelay({
      port: 0,
      database: ':memory:',
      sources: [{ name: 'web', writeKey: 'the-right-key' }],
    })
    try {
      const result = await runCli([
        '--writeKey=a-wrong-key',
        '--type=identify',
        '--userId=u',
        `--endpoint=${relay.url}`,
      ])
      expect(result.code).toBe(1)
      // The relay's own code and reason, said once (one batch, one line).
      expect(result.stderr).toMatch(/HTTP 401: unknown write key \(ERR_UNAUTHORIZED\) \(ERR_DELIVERY\)\n$/)
      expect(result.stderr.match(/unknown write key/g)).toHaveLength(1)
      expect(result.stderr).not.toContain('a-wrong-key')
    } finally {
      await relay.close()
    }
  })

  it('names the network error behind a --timeout (ECONNREFUSED)', async () => {
    // A port that was free a moment ago: nothing listens there.
    const closed = createServer()
    closed.listen(0, '127.0.0.1')
    await once(closed, 'listening')
    const { port } = closed.address() as AddressInfo
    await new Promise((resolve) => closed.close(resolve))
    const result = await runCli([
      `--writeKey=${WRITE_KEY}`,
      '--type=identify',
      '--userId=u',
      // Room for a retry (the first backoff is at most 250 ms) on a busy machine.
      '--timeout=4000',
      `--endpoint=http://127.0.0.1:${port}`,
    ])
    expect(result.code).toBe(1)
    // Not silent while it retries: each retry is said, with why the attempt before it failed.
    expect(result.stderr).toMatch(
      /^tracklet send: attempt 1 failed \([^)]*ECONNREFUSED[^)]*\); retrying \(attempt 2\)\n/,
    )
    expect(result.stderr).toMatch(
      new RegExp(
        `\\ntracklet send: the identify message timed out after 4000 ms \\(--timeout\\) before the endpoint accepted it; last attempt: .*ECONNREFUSED 127\\.0\\.0\\.1:${port}.*\\n$`,
      ),
    )
  })

  it('sends to $TRACKLET_ENDPOINT when --endpoint is not given', async () => {
    const receiver = createServer((request, response) => {
      request.resume()
      request.on('end', () => response.end('{}'))
    })
    receiver.listen(0, '127.0.0.1')
    await once(receiver, 'listening')
    const { port } = receiver.address() as AddressInfo
    try {
      const result = await runCli([`--writeKey=${WRITE_KEY}`, '--type=identify', '--userId=u'], {
        TRACKLET_ENDPOINT: `http://127.0.0.1:${port}`,
      })
      expect(result.code).toBe(0)
      expect(result.stdout).toMatch(new RegExp(`accepted by http://127\\.0\\.0\\.1:${port}\\n$`))
    } finally {
      await new Promise((resolve) => receiver.close(resolve))
    }
  })
})

function escapeRegExp(text: string): string {
  return text.replace(/[$()*+.?[\\\]^{|}]/g, '\\$&')
}
