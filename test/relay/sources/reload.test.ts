import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type Relay, RelayConfigError, RelayError, type RelayOptions, type RelaySource } from '../../../src/relay/index'
import { addLogSink, type LogEvent } from '../../../src/relay/log'
import { startRelay as startRelayProcess } from '../../../src/relay/relay'
import type { ReloadChanges } from '../../../src/relay/sources/reload-plan'
import { ConfigReloader } from '../../../src/relay/sources/reload'
import { validateRelayOptions } from '../../../src/relay/config/validate'
import type { DestinationFunction } from '../../../src/relay/config/function-settings'
import { ADMIN_TOKEN, basic, post, type Receiver, startReceiver, track, waitFor, WRITE_KEY } from '../helpers'

// Relay.reload, as an in-process user (and `tracklet relay` on SIGHUP) applies a new config to a
// running relay: sources and alerts whole, every other option logged as needing a restart.

const dir = mkdtempSync(join(tmpdir(), 'tracklet-reload-'))
const APP_KEY = 'wk-test-app'
let receiver: Receiver
let operator: Receiver
let relay: Relay | undefined
let logged: LogEvent[]
let stopLogging: () => void

beforeEach(async () => {
  receiver = await startReceiver()
  // A message of event `Gone` is refused for good by the receiver: a dead letter, so an alert.
  receiver.respond((_req, res) => {
    res.writeHead(receiver.received.at(-1)?.body['event'] === 'Gone' ? 404 : 200).end()
  })
  operator = await startReceiver()
  logged = []
  stopLogging = addLogSink((event) => logged.push(event))
})
afterEach(async () => {
  await relay?.close()
  relay = undefined
  stopLogging()
  await receiver.close()
  await operator.close()
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function web(fn: DestinationFunction = {}): RelaySource {
  return { name: 'web', writeKey: WRITE_KEY, destinations: { Webhooks: { webhooks: [{ url: receiver.url }], ...fn } } }
}

function optionsWith(overrides: Partial<RelayOptions> = {}): RelayOptions {
  return {
    port: 0,
    database: ':memory:',
    adminToken: ADMIN_TOKEN,
    allowPrivateNetworks: true,
    sources: [web()],
    ...overrides,
  }
}

async function start(options: RelayOptions, onReloaded?: (changes: ReloadChanges) => void): Promise<Relay> {
  relay = await startRelayProcess(options, { sharedByProcesses: false, warningsLogged: false, onReloaded })
  return relay
}

const send = (url: string, key: string, body = track()) => post(`${url}/v1/track`, body, { authorization: basic(key) })
const lines = (level: LogEvent['level']) => logged.filter((event) => event.level === level).map((event) => event.msg)

describe('Relay.reload', () => {
  it('adds, changes and removes sources as the new options say, and tells what changed', async () => {
    const told: ReloadChanges[] = []
    const running = await start(optionsWith(), (changes) => told.push(changes))
    expect((await send(running.url, WRITE_KEY)).status).toBe(200)
    expect((await send(running.url, APP_KEY)).status).toBe(401)

    const changes = await running.reload(optionsWith({ sources: [{ ...web(), name: 'app', writeKey: APP_KEY }] }))

    expect(changes).toEqual({ added: ['app'], changed: [], removed: ['web'], alerts: false, restartNeeded: [] })
    expect(told).toEqual([changes])
    expect((await send(running.url, APP_KEY)).status).toBe(200)
    expect((await send(running.url, WRITE_KEY)).status).toBe(401)
    expect(lines('info')).toContain('config reloaded: 1 source added (app), 1 source removed (web)')
  })

  it('refuses invalid options whole, logging every problem at error, and keeps the running config', async () => {
    const running = await start(optionsWith())
    const invalid = {
      ...optionsWith(),
      sources: [web(), { name: 'app', destinations: {} }],
      alerts: { url: 'not a url' },
    } as unknown as RelayOptions

    const refused = await running.reload(invalid).catch((error: unknown) => error)

    expect(refused).toBeInstanceOf(RelayConfigError)
    const fields = (refused as RelayConfigError).problems.map((problem) => problem.field)
    expect(fields).toEqual(expect.arrayContaining(['sources[1].writeKey', 'alerts.url']))
    for (const field of fields) expect(lines('error').some((line) => line.includes(`: ${field}: `))).toBe(true)
    expect(lines('error')).toContain('config reload refused: the running config stays')
    expect((await send(running.url, WRITE_KEY)).status).toBe(200)
  })

  it('logs other changed options at warn as needing a restart, by name only, and does not apply them', async () => {
    const running = await start(optionsWith())
    const changes = await running.reload(optionsWith({ adminToken: 'a-new-admin-token', webhookTimeout: 9000 }))

    expect(changes.restartNeeded).toEqual(['adminToken', 'webhookTimeout'])
    const warning = lines('warn').find((line) => line.includes('need a restart'))
    expect(warning).toContain('adminToken, webhookTimeout changed')
    expect(logged.map((event) => event.msg).join('\n')).not.toContain('a-new-admin-token')
    const asAdmin = (token: string) =>
      fetch(`${running.url}/v1/deliveries`, { headers: { authorization: `Bearer ${token}` } })
    expect((await asAdmin(ADMIN_TOKEN)).status).toBe(200)
    expect((await asAdmin('a-new-admin-token')).status).toBe(401)
  })

  it('sends alerts to the new alerts URL from then on', async () => {
    const former = await startReceiver()
    try {
      const running = await start(optionsWith({ alerts: { url: former.url } }))
      const changes = await running.reload(optionsWith({ alerts: { url: operator.url } }))
      expect(changes.alerts).toBe(true)

      expect((await send(running.url, WRITE_KEY, track({ event: 'Gone' }))).status).toBe(200)
      const alert = await waitFor(
        () => operator.received.find((r) => r.body['event'] === 'delivery.failed'),
        'the alert',
      )
      expect(alert.body['source']).toBe('web')
      expect(former.received).toEqual([])
    } finally {
      await former.close()
    }
  })

  it("reads a destination's function file again, and keeps the running function when the new one does not compile", async () => {
    const file = join(dir, 'tag.js')
    const tagWith = (tag: string) =>
      writeFileSync(
        file,
        `function transformEvent(event) { event.properties = { tag: ${JSON.stringify(tag)} }; return event }`,
      )
    tagWith('first')
    const options = optionsWith({ sources: [web({ function: { file } })] })
    const running = await start(options)
    const tagsReceived = () => receiver.received.map((r) => (r.body['properties'] as { tag?: string } | undefined)?.tag)

    await send(running.url, WRITE_KEY)
    await waitFor(() => (tagsReceived().length === 1 ? true : undefined), 'the first delivery')
    tagWith('second')
    await running.reload(options)
    await send(running.url, WRITE_KEY)
    await waitFor(() => (tagsReceived().length === 2 ? true : undefined), 'the second delivery')

    writeFileSync(file, 'function transformEvent(event) { return event') // does not compile
    const refused = await running.reload(options).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(RelayConfigError)
    expect((refused as RelayConfigError).field).toBe('sources[0].destinations.Webhooks.function.file')
    await send(running.url, WRITE_KEY)
    await waitFor(() => (tagsReceived().length === 3 ? true : undefined), 'the third delivery')
    expect(tagsReceived()).toEqual(['first', 'second', 'second'])
  })
})

describe('Relay.reload after close', () => {
  it('is refused with ERR_RELAY_CLOSED: nothing is left running for a closed relay', async () => {
    const running = await start(optionsWith())
    await running.close()
    relay = undefined
    await expect(running.reload(optionsWith())).rejects.toMatchObject({ code: 'ERR_RELAY_CLOSED' })
  })
})

describe('ConfigReloader', () => {
  it('changes nothing when a part refuses the new config (a source name the admin API holds), and logs why at error', async () => {
    const current = validateRelayOptions(optionsWith())
    const events: string[] = []
    const reloader = new ConfigReloader(current, {
      sources: {
        replace: () => {
          throw new RelayError(
            'ERR_RELAY_CONFIG',
            'the config file\'s sources[1] and an API source are both named "app"',
          )
        },
      },
      parts: [
        {
          prepare: async () => ({
            commit: () => events.push('functions committed'),
            discard: async () => {
              events.push('functions discarded')
            },
          }),
        },
        { prepare: async () => ({ commit: () => events.push('alerts changed'), discard: async () => {} }) },
      ],
      warningsLogged: false,
      onReloaded: () => {
        events.push('told')
      },
    })
    const next = optionsWith({ sources: [web(), { name: 'app', writeKey: APP_KEY }], alerts: { url: operator.url } })

    await expect(reloader.reload(next)).rejects.toThrow(/both named "app"/)

    expect(events).toEqual(['functions discarded'])
    expect(lines('error')).toContain(
      'config reload refused: the config file\'s sources[1] and an API source are both named "app"',
    )
    // The next reload is compared with the config still running: the source is still new.
    const applied = await new ConfigReloader(current, {
      sources: { replace: () => {} },
      parts: [{ prepare: async () => ({ commit: () => {}, discard: async () => {} }) }],
      warningsLogged: false,
    }).reload(next)
    expect(applied.added).toEqual(['app'])
  })
})
