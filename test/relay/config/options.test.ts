import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { createRelay, loadRelayConfig, RelayConfigError } from '../../../src/relay/index'
import { validateRelayOptions } from '../../../src/relay/config/validate'

const source = {
  name: 'web',
  writeKey: 'wk-web',
  destinations: { Webhooks: { webhooks: [{ url: 'https://hooks.example.com/a' }] } },
}

describe('relay options', () => {
  it('applies the defaults', () => {
    expect(validateRelayOptions({ sources: [source] })).toMatchObject({
      port: 8787,
      host: '127.0.0.1',
      database: 'tracklet.db',
      adminToken: undefined,
      allowPrivateNetworks: false,
      concurrency: 32,
      webhookTimeout: 5000,
    })
  })

  it.each([
    [{ sources: [source], port: -1 }, 'port', 'port: must be an integer from 0 to 65535, got number -1'],
    [{ sources: [source], port: '8787' }, 'port', 'port: must be an integer from 0 to 65535, got a string'],
    [
      { sources: [source], allowPrivateNetworks: 'yes' },
      'allowPrivateNetworks',
      'allowPrivateNetworks: must be true or false, got a string',
    ],
    [{ sources: [source], adminToken: '' }, 'adminToken', 'adminToken: must be a non-empty string, got string'],
    [{ sources: [source], databse: 'x.db' }, 'databse', expect.stringMatching(/^databse: is not a relay option/)],
    [{ sources: {} }, 'sources', 'sources: must be an array of sources, got an object'],
    [
      {},
      'sources',
      'sources: must be an array of sources (empty when every source comes from the admin API), got undefined',
    ],
    [
      { sources: [{ ...source, writeKey: 42 }] },
      'sources[0].writeKey',
      'sources[0].writeKey: must be a non-empty string, got number',
    ],
    [
      { sources: [source, { ...source, name: 'ios' }] },
      'sources[1].writeKey',
      'sources[1].writeKey: is the write key of another source',
    ],
    [
      { sources: [source, { ...source, writeKey: 'other' }] },
      'sources[1].name',
      'sources[1].name: "web" is used by another source',
    ],
    [
      { sources: [{ ...source, destinations: { webhooks: {} } }] },
      'sources[0].destinations.webhooks',
      expect.stringMatching(
        /is not a known destination \(names are case sensitive\) \(known: Webhooks(, \w+)*\) \(did you mean `Webhooks`\?\)/,
      ),
    ],
    [
      { sources: [{ ...source, destinations: { Webhooks: [] } }] },
      'sources[0].destinations.Webhooks',
      'sources[0].destinations.Webhooks: must be an object of settings, got an array',
    ],
  ])('refuses %j naming %s', (options, field, message) => {
    let error: unknown
    try {
      validateRelayOptions(options)
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(RelayConfigError)
    expect(error).toMatchObject({ code: 'ERR_RELAY_CONFIG', field, message })
  })

  it('never puts a write key in an error message', () => {
    expect(() => validateRelayOptions({ sources: [source, { ...source, name: 'ios' }] })).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('wk-web') }),
    )
  })

  it('does not keep the caller’s objects', () => {
    const settings = { webhooks: [{ url: 'https://hooks.example.com/a' }] }
    const resolved = validateRelayOptions({
      sources: [{ name: 'web', writeKey: 'k', destinations: { Webhooks: settings } }],
    })
    settings.webhooks[0]!.url = 'http://169.254.169.254/'
    expect(resolved.sources[0]!.destinations!.Webhooks!.webhooks[0]!.url).toBe('https://hooks.example.com/a')
  })

  it('createRelay refuses destination settings the Webhooks destination refuses, naming the source', async () => {
    const bad = { ...source, destinations: { Webhooks: { webhooks: [{ url: 'ftp://hooks.example.com' }] } } }
    await expect(createRelay({ port: 0, database: ':memory:', sources: [bad] })).rejects.toMatchObject({
      code: 'ERR_RELAY_CONFIG',
      field: 'sources[0].destinations.Webhooks.webhooks[0].url',
      message: expect.stringMatching(/^sources\[0\]\.destinations\.Webhooks\.webhooks\[0\]\.url: must be a full http/),
    })
  })
})

describe('loadRelayConfig', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tracklet-config-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  const write = (name: string, text: string) => {
    const path = join(dir, name)
    writeFileSync(path, text)
    return path
  }

  it('reads a config file and takes a relative database path from its folder', async () => {
    const path = write('ok.json', JSON.stringify({ port: 0, database: 'data/relay.db', sources: [source] }))
    expect(await loadRelayConfig(path)).toMatchObject({
      port: 0,
      database: join(dir, 'data/relay.db'),
      sources: [source],
    })
  })

  it('keeps a postgres:// database URL as it is', async () => {
    const database = 'postgres://tracklet:pw@db:5432/tracklet'
    const path = write('pg.json', JSON.stringify({ database, sources: [source] }))
    expect((await loadRelayConfig(path)).database).toBe(database)
  })

  it('names the file and the field of an invalid config', async () => {
    const path = write('bad.json', JSON.stringify({ sources: [{ name: 'web' }] }))
    await expect(loadRelayConfig(path)).rejects.toMatchObject({
      field: 'sources[0].writeKey',
      message: `sources[0].writeKey: must be a non-empty string, got undefined (in ${path})`,
    })
  })

  it('accepts the example config, which holds no secret, and a relay starts from it', async () => {
    const path = fileURLToPath(new URL('../../../examples/tracklet.config.json', import.meta.url))
    // Its secrets are environment references: without them it is refused, naming each.
    await expect(loadRelayConfig(path, {})).rejects.toThrow(/TRACKLET_ADMIN_TOKEN/)
    const example = await loadRelayConfig(path, {
      TRACKLET_ADMIN_TOKEN: 'an-admin-token-of-some-length',
      WEB_WRITE_KEY: 'wk-example',
      WEBHOOK_SECRET: 'a-signing-secret',
    })
    expect(example.sources.map((s) => s.name)).toEqual(['web'])
    expect(example.sources[0]!.writeKey).toBe('wk-example')
    const relay = await createRelay({ ...example, port: 0, database: ':memory:' })
    await relay.close()
  })

  it('says when the file is not JSON, or missing', async () => {
    await expect(loadRelayConfig(write('broken.json', '{ "sources": '))).rejects.toThrow(/is not valid JSON/)
    await expect(loadRelayConfig(join(dir, 'missing.json'))).rejects.toThrow(/cannot read the config file/)
  })
})
