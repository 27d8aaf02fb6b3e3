import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runFunction } from '../../src/cli/function'
import type { Relay } from '../../src/relay/index'
import { ADMIN_TOKEN, post, type Receiver, startReceiver, startRelay, track, waitForDelivery } from '../relay/helpers'

const dir = mkdtempSync(join(tmpdir(), 'tracklet-function-'))
function file(name: string, text: string): string {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}

async function run(...args: string[]) {
  let stdout = ''
  let stderr = ''
  const code = await runFunction(args, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: {},
  })
  return {
    code,
    stderr,
    lines: stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line)),
  }
}

const FUNCTION = file(
  'scrub.js',
  `function onTrack(event, settings) {
    console.log('scrubbing', event.messageId)
    if (event.properties.internal) return null
    if (event.event === 'Boom') throw new Error('bad event')
    return { ...event, properties: { plan: event.properties.plan, by: settings.by } }
  }`,
)

// `tracklet function test` (docs/functions.md): one JSON line per event; exit 1 when the code does not compile.
describe('tracklet function test', () => {
  it('runs the function on the events of --event, here, printing one result per event', async () => {
    const events = file(
      'events.json',
      JSON.stringify([
        track({ messageId: 'm-1', properties: { plan: 'pro', email: 'a@b.c' } }),
        track({ messageId: 'm-2', properties: { internal: true } }),
        track({ messageId: 'm-3', event: 'Boom', properties: {} }),
      ]),
    )
    const settings = file('settings.json', JSON.stringify({ by: 'cli' }))
    const { code, lines, stderr } = await run('test', FUNCTION, '--event', events, '--settings', settings)
    expect(stderr).toBe('')
    expect(code).toBe(0)
    expect(lines).toHaveLength(3)
    expect(lines[0]).toMatchObject({
      output: { messageId: 'm-1', properties: { plan: 'pro', by: 'cli' } },
      logs: ['scrubbing m-1'],
    })
    expect(lines[0].output.properties).not.toHaveProperty('email')
    expect(lines[1]).toMatchObject({ dropped: true, logs: ['scrubbing m-2'] })
    expect(lines[2]).toMatchObject({ error: 'bad event', logs: ['scrubbing m-3'] })
    for (const line of lines) expect(typeof line.ms).toBe('number')
  })

  it('takes one message as well as an array', async () => {
    const one = file('one.json', JSON.stringify(track({ messageId: 'm-one', properties: {} })))
    const { code, lines } = await run('test', FUNCTION, '--event', one)
    expect(code).toBe(0)
    expect(lines.map((l) => l.input.messageId)).toEqual(['m-one'])
  })

  it('exits 1 naming the problem when the code does not compile', async () => {
    const broken = file('broken.js', 'function onTrack( {')
    const { code, lines, stderr } = await run('test', broken, '--event', file('e.json', JSON.stringify(track())))
    expect(code).toBe(1)
    expect(lines).toEqual([])
    expect(stderr).toContain(`${broken}: the function does not compile: SyntaxError`)
  })

  it('exits 2 on a bad command line, saying what is wrong', async () => {
    expect((await run('test', FUNCTION)).stderr).toContain('give either --event FILE or --source NAME')
    expect((await run('test', FUNCTION, '--event', join(dir, 'missing.json'))).stderr).toContain(
      'cannot read the event',
    )
    expect((await run('test', FUNCTION, '--source', 'web')).stderr).toContain('--source needs --relay')
    expect((await run('run', FUNCTION)).code).toBe(2)
    expect((await run('test', FUNCTION, '--nope')).code).toBe(2)
  })

  describe('with --source, on a relay', () => {
    let receiver: Receiver
    let relay: Relay
    beforeAll(async () => {
      receiver = await startReceiver()
      relay = await startRelay(receiver.url)
      for (const id of ['m-a', 'm-b']) {
        await post(`${relay.url}/v1/batch`, { batch: [track({ messageId: id, properties: { plan: id } })] })
        await waitForDelivery(relay.url, 'delivered', id)
      }
    })
    afterAll(async () => {
      await relay.close()
      await receiver.close()
    })

    it("runs on the source's newest stored messages through the relay", async () => {
      const base = ['test', FUNCTION, '--source', 'web', '--relay', relay.url]
      const { code, lines } = await run(...base, '--admin-token', ADMIN_TOKEN, '--limit', '2')
      expect(code).toBe(0)
      expect(lines.map((l) => l.output.properties.plan)).toEqual(['m-b', 'm-a'])
      const refused = await run(...base, '--admin-token', 'wrong-token')
      expect(refused.code).toBe(1)
      expect(refused.stderr).toContain('the relay answered 401')
      expect(refused.stderr).not.toContain('wrong-token')
    })
  })
})
