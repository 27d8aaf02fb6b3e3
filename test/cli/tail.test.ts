import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { runTail } from '../../src/cli/tail'
import { parseTailArgs } from '../../src/cli/tail-args'
import type { Relay } from '../../src/relay/index'
import { verifySignature } from '../../src/webhooks/index'
import { ADMIN_TOKEN, post, type Receiver, startReceiver, startRelay, track, waitFor } from '../relay/helpers'

const SECRET = 'tail-shared-secret'

let receiver: Receiver
let local: Receiver
let relay: Relay

beforeEach(async () => {
  receiver = await startReceiver()
  local = await startReceiver()
  relay = await startRelay(receiver.url, {
    sources: [
      {
        name: 'web',
        writeKey: 'wk-test-web',
        destinations: { Webhooks: { webhooks: [{ url: receiver.url }], sharedSecret: SECRET } },
      },
    ],
  })
})
afterEach(async () => {
  await relay.close()
  await receiver.close()
  await local.close()
})

function tail(args: string[]) {
  const controller = new AbortController()
  let stdout = ''
  let stderr = ''
  const exited = runTail(args, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    signal: controller.signal,
  })
  return { exited, stop: () => controller.abort(), stdout: () => stdout, stderr: () => stderr }
}

describe('tracklet tail', () => {
  it('with --json prints one JSON object per event on stdout and nothing else', async () => {
    const run = tail(['--relay', relay.url, '--admin-token', ADMIN_TOKEN, '--json'])
    await waitFor(() => (run.stderr().includes('reading') ? true : undefined), 'tail to connect')
    await post(`${relay.url}/v1/track`, track({ messageId: 'tail-1', event: 'Tailed' }))
    await waitFor(() => (run.stdout().includes('"attempt"') ? true : undefined), 'the attempt')
    run.stop()
    expect(await run.exited).toBe(0)
    const lines = run
      .stdout()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(lines[0]).toMatchObject({ kind: 'ingested', data: { source: 'web', messageId: 'tail-1', event: 'Tailed' } })
    expect(lines.at(-1)).toMatchObject({
      kind: 'attempt',
      data: { messageId: 'tail-1', outcome: 'delivered', status: 200 },
    })
  })

  it('prints a line per event for a person', async () => {
    const run = tail(['--relay', relay.url, '--admin-token', ADMIN_TOKEN])
    await waitFor(() => (run.stderr().includes('reading') ? true : undefined), 'tail to connect')
    await post(`${relay.url}/v1/track`, track({ messageId: 'tail-2', event: 'Tailed' }))
    await waitFor(() => (run.stdout().includes('attempt') ? true : undefined), 'the attempt')
    run.stop()
    await run.exited
    expect(run.stdout()).toMatch(/ingested web tail-2 track "Tailed" u1/)
    expect(run.stdout()).toMatch(/attempt {2}web tail-2 → .*\/hook delivered 200 \d+ ms/)
  })

  it('forwards the source’s messages to a local URL with the relay’s body and signature', async () => {
    const run = tail(['--relay', relay.url, '--admin-token', ADMIN_TOKEN, '--source', 'web', '--forward-to', local.url])
    await waitFor(() => (run.stderr().includes('reading') ? true : undefined), 'tail to connect')
    await post(`${relay.url}/v1/track`, track({ messageId: 'fwd-1', event: 'Forwarded' }))
    const forwarded = await waitFor(() => local.received[0], 'the forwarded message')
    run.stop()
    await run.exited
    expect(forwarded.body).toMatchObject({ messageId: 'fwd-1', event: 'Forwarded', type: 'track' })
    expect(verifySignature(forwarded.raw, forwarded.headers['x-signature'], SECRET)).toBe(true)
    await waitFor(() => receiver.received[0], 'the real delivery')
    expect(forwarded.raw).toBe(receiver.received[0]!.raw)
  })

  it('forwards what the destination’s function returns, as delivery sends it, and nothing the function drops', async () => {
    await relay.close()
    relay = await startRelay(receiver.url, {
      sources: [
        {
          name: 'web',
          writeKey: 'wk-test-web',
          destinations: {
            Webhooks: {
              webhooks: [{ url: receiver.url }],
              sharedSecret: SECRET,
              function: {
                code: `function onTrack(event) {
                  if (event.event === 'Dropped') return null
                  event.properties = { ...event.properties, tagged: true }
                  return event
                }`,
              },
            },
          },
        },
      ],
    })
    const run = tail(['--relay', relay.url, '--admin-token', ADMIN_TOKEN, '--source', 'web', '--forward-to', local.url])
    await waitFor(() => (run.stderr().includes('reading') ? true : undefined), 'tail to connect')
    await post(`${relay.url}/v1/batch`, {
      batch: [
        track({ messageId: 'fwd-dropped', event: 'Dropped' }),
        track({ messageId: 'fwd-tagged', event: 'Tagged' }),
      ],
    })
    const forwarded = await waitFor(() => local.received[0], 'the forwarded message')
    await waitFor(() => receiver.received[0], 'the real delivery')
    run.stop()
    await run.exited
    expect(local.received).toHaveLength(1)
    expect(forwarded.body).toMatchObject({ messageId: 'fwd-tagged', properties: { tagged: true } })
    expect(verifySignature(forwarded.raw, forwarded.headers['x-signature'], SECRET)).toBe(true)
    // Byte for byte what the destination sent the real receiver.
    expect(forwarded.raw).toBe(receiver.received[0]!.raw)
    expect(receiver.received).toHaveLength(1)
  })

  it('reconnects when the relay restarts, saying so on stderr, and forwards again', async () => {
    const sources = [
      {
        name: 'web',
        writeKey: 'wk-test-web',
        destinations: { Webhooks: { webhooks: [{ url: receiver.url }], sharedSecret: SECRET } },
      },
    ]
    const run = tail(['--relay', relay.url, '--admin-token', ADMIN_TOKEN, '--source', 'web', '--forward-to', local.url])
    await waitFor(() => (run.stderr().includes('reading') ? true : undefined), 'tail to connect')
    const port = Number(new URL(relay.url).port)
    await relay.close()
    await waitFor(() => (run.stderr().includes('reconnecting in') ? true : undefined), 'tail to notice')
    // Down for a while: the tries that find nothing listening do not end it either.
    await waitFor(() => (run.stderr().match(/reconnecting in/g)!.length >= 2 ? true : undefined), 'a second try')
    relay = await startRelay(receiver.url, { port, sources })
    await waitFor(() => (run.stderr().includes('reconnected to') ? true : undefined), 'tail to reconnect', 20_000)
    await post(`${relay.url}/v1/track`, track({ messageId: 'fwd-after', event: 'Forwarded' }))
    const forwarded = await waitFor(() => local.received[0], 'the forwarded message')
    run.stop()
    expect(await run.exited).toBe(0)
    expect(forwarded.body).toMatchObject({ messageId: 'fwd-after' })
    expect(run.stderr()).toMatch(/the relay ended the stream|the stream broke/)
  })

  it('exits 1 naming the refusal when the token is wrong, and 2 on bad arguments', async () => {
    const wrong = tail(['--relay', relay.url, '--admin-token', 'nope'])
    expect(await wrong.exited).toBe(1)
    expect(wrong.stderr()).toContain('401')
    expect(wrong.stderr()).not.toContain('nope')
    const bad = tail(['--relay', relay.url, '--admin-token', 'x', '--forward-to', local.url])
    expect(await bad.exited).toBe(2)
    expect(bad.stderr()).toContain('--forward-to needs --source')
  })
})

describe('tracklet tail --forward-to', () => {
  const args = (url: string) => [
    '--relay',
    'http://relay.example',
    '--admin-token',
    't',
    '--source',
    'web',
    '--forward-to',
    url,
  ]

  it.each(['http://hooks.example.com/in', 'https://10.0.0.5/hook', 'http://[2001:db8::1]/', 'http://0.0.0.0:3000/'])(
    'refuses %s: only a local URL is sent the signed messages',
    (url) => {
      expect(parseTailArgs(args(url))).toEqual({ problem: expect.stringContaining('--forward-to must be a local URL') })
    },
  )

  it.each([
    'http://localhost:3000/hook',
    'http://127.0.0.1:3000/',
    'http://127.1.2.3/',
    'http://[::1]:3000/',
    'http://app.localhost/',
  ])('takes %s', (url) => {
    expect(parseTailArgs(args(url))).toMatchObject({ forwardTo: url })
  })
})
