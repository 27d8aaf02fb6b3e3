import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { RELAY_OPTION_NAMES, validateRelayOptions } from '../../../src/relay/config/validate'
import { createRelay, loadRelayConfig, RelayConfigError } from '../../../src/relay/index'
import { WebhookConfigError } from '../../../src/webhooks/index'

const webhooks = { webhooks: [{ url: 'https://hooks.example.com/a' }] }
const source = { name: 'web', writeKey: 'wk-web', destinations: { Webhooks: webhooks } }

const dir = mkdtempSync(join(tmpdir(), 'tracklet-validation-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function writeConfig(name: string, config: unknown): string {
  const path = join(dir, name)
  writeFileSync(path, JSON.stringify(config))
  return path
}

function problemsOf(options: unknown): { field: string; message: string }[] {
  try {
    validateRelayOptions(options)
  } catch (error) {
    expect(error).toBeInstanceOf(RelayConfigError)
    return [...(error as RelayConfigError).problems]
  }
  throw new Error('expected the options to be refused')
}

describe('an unknown key, at any depth', () => {
  it.each([
    [{ sources: [source], databse: 'x.db' }, 'databse', 'database'],
    [
      { sources: [{ ...source, destinations: undefined, destination: { Webhooks: webhooks } }] },
      'sources[0].destination',
      'destinations',
    ],
    [{ sources: [{ ...source, destinatons: { Webhooks: webhooks } }] }, 'sources[0].destinatons', 'destinations'],
    [{ sources: [{ ...source, blockedEvents: ['A'] }] }, 'sources[0].blockedEvents', undefined],
    [{ sources: [{ ...source, writekey: 'x' }] }, 'sources[0].writekey', 'writeKey'],
    [{ sources: [{ ...source, destinations: { webhooks } }] }, 'sources[0].destinations.webhooks', 'Webhooks'],
    [{ sources: [{ ...source, schema: { blockedEvent: ['A'] } }] }, 'sources[0].schema.blockedEvent', 'blockedEvents'],
    [{ sources: [source], breaker: { failureTreshold: 3 } }, 'breaker.failureTreshold', 'failureThreshold'],
  ])('%j is refused at its path with the nearest known key', (options, field, nearest) => {
    const [problem, ...others] = problemsOf(options)
    expect(others).toEqual([])
    expect(problem!.field).toBe(field)
    expect(problem!.message).toMatch(/^is not /)
    if (nearest === undefined) expect(problem!.message).not.toContain('did you mean')
    else expect(problem!.message).toContain(`(did you mean \`${nearest}\`?)`)
  })

  it('inside the Webhooks settings too, with the setting’s path under the source', () => {
    const [problem] = problemsOf({
      sources: [{ ...source, destinations: { Webhooks: { webhooks: [{ url: 'https://a.example/', header: {} }] } } }],
    })
    expect(problem!.field).toBe('sources[0].destinations.Webhooks.webhooks[0].header')
    expect(problem!.message).toMatch(/is not a known setting; allowed: url, headers \(did you mean `headers`\?\)$/)
    const [secret] = problemsOf({
      sources: [{ ...source, destinations: { Webhooks: { ...webhooks, sharedSecrett: 'x' } } }],
    })
    expect(secret).toMatchObject({
      field: 'sources[0].destinations.Webhooks.sharedSecrett',
      message: expect.stringMatching(/\(did you mean `sharedSecret`\?\)$/),
    })
  })

  it('lists every known key, taken from the rules validation reads', () => {
    const [problem] = problemsOf({ sources: [source], nope: 1 })
    expect(problem!.message).toBe(`is not a relay option (known: ${RELAY_OPTION_NAMES.join(', ')})`)
    // Every option the resolved options carry is one the rules know, and the other way round.
    const resolved = validateRelayOptions({ sources: [source] })
    expect([...RELAY_OPTION_NAMES].sort()).toEqual(Object.keys(resolved).sort())
  })
})

describe('every problem at once', () => {
  const broken = {
    port: 70_000,
    hots: '0.0.0.0',
    sources: [
      { name: 'web', writeKey: 'wk-1', destination: { Webhooks: webhooks } },
      { name: 'web', writeKey: 'wk-1', destinations: { Webhooks: { webhooks: [{ url: 'ftp://x' }] } } },
      { writeKey: 42 },
    ],
    breaker: { probeInterval: 50 },
  }
  const fields = [
    'port',
    'hots',
    'sources[0].destination',
    'sources[1].destinations.Webhooks.webhooks[0].url',
    'sources[1].name',
    'sources[1].writeKey',
    'sources[2].writeKey',
    'sources[2].name',
    'breaker.probeInterval',
  ]

  it('are reported by one error, each on its own line, in the order of the options', () => {
    let error: RelayConfigError | undefined
    try {
      validateRelayOptions(broken)
    } catch (caught) {
      error = caught as RelayConfigError
    }
    expect(error?.problems.map((problem) => problem.field)).toEqual(fields)
    expect(error?.field).toBe('port')
    expect(error?.message.split('\n')).toHaveLength(fields.length)
    expect(error?.message).not.toContain('wk-1')
  })

  it("a destination's every problem, a misspelt key and a bad URL alike", () => {
    const settings = {
      webhooks: [
        { url: 'not a url', hedaers: {} },
        { url: 'https://ok.example', headers: { Host: 'x' } },
      ],
      sharedSecrt: 's',
      standardWebhooks: true,
    }
    const problems = problemsOf({ sources: [{ name: 'web', writeKey: 'wk-1', destinations: { Webhooks: settings } }] })
    const at = 'sources[0].destinations.Webhooks'
    expect(problems.map((problem) => problem.field)).toEqual([
      `${at}.sharedSecrt`,
      `${at}.webhooks[0].hedaers`,
      `${at}.webhooks[0].url`,
      `${at}.webhooks[1].headers.Host`,
      `${at}.standardWebhooks`,
    ])
    expect(problems[0]!.message).toContain('(did you mean `sharedSecret`?)')
  })

  it('the same from createRelay and from loadRelayConfig', async () => {
    const fromCode = await createRelay(broken as never).catch((error: RelayConfigError) => error)
    const fromFile = await loadRelayConfig(writeConfig('broken.json', broken)).catch((error: RelayConfigError) => error)
    expect((fromCode as RelayConfigError).problems.map((p) => p.field)).toEqual(fields)
    expect((fromFile as RelayConfigError).problems.map((p) => p.field)).toEqual(fields)
  })
})

describe('loadRelayConfig refuses the Webhooks settings createRelay refuses', () => {
  it.each([
    [{ 'X-Team': 'a\r\nInjected: yes' }, 'X-Team', /no line breaks/],
    [{ Host: 'evil.example' }, 'Host', /set by the destination or the transport/],
    [{ 'X-Signature': 'forged' }, 'X-Signature', /set by the destination or the transport/],
  ])('headers %j', async (headers, name, message) => {
    const config = {
      sources: [{ ...source, destinations: { Webhooks: { webhooks: [{ url: 'https://a.example/', headers }] } } }],
    }
    const field = `sources[0].destinations.Webhooks.webhooks[0].headers.${name}`
    await expect(loadRelayConfig(writeConfig('headers.json', config))).rejects.toMatchObject({ field, message })
    await expect(createRelay({ ...config, database: ':memory:', port: 0 })).rejects.toMatchObject({ field, message })
  })

  it("keeps the destination's own WebhookConfigError as the cause", async () => {
    const config = { sources: [{ ...source, destinations: { Webhooks: { webhooks: [] } } }] }
    const error = await createRelay({ ...config, database: ':memory:', port: 0 }).catch((caught: unknown) => caught)
    expect((error as RelayConfigError).cause).toBeInstanceOf(WebhookConfigError)
  })

  it('never quoting a header value', async () => {
    const config = {
      sources: [
        {
          ...source,
          destinations: {
            Webhooks: { webhooks: [{ url: 'https://a.example/', headers: { Auth: 'Bearer hdr-secret\n' } }] },
          },
        },
      ],
    }
    await expect(loadRelayConfig(writeConfig('header-value.json', config))).rejects.toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('hdr-secret') }),
    )
  })
})

describe('the database value', () => {
  it.each([
    ['postgress://tracklet:pw-db-secret@127.0.0.1:5432/tracklet', /scheme "postgress:" \(did you mean `postgres`\?\)/],
    ['pg://tracklet:pw-db-secret@127.0.0.1:5432/tracklet', /scheme "pg:"/],
    [' postgres://tracklet:pw-db-secret@127.0.0.1:5432/tracklet', /whitespace/],
    ['tracklet:pw-db-secret@127.0.0.1:5432/tracklet', /without its scheme/],
  ])('%s is refused, never printed', (database, message) => {
    const [problem] = problemsOf({ database, sources: [source] })
    expect(problem).toEqual({ field: 'database', message: expect.stringMatching(message) })
    expect(problem!.message).not.toContain('pw-db-secret')
  })

  it('accepts file paths, :memory: and postgres URLs', () => {
    for (const database of [
      './relay.db',
      'C:\\data\\relay.db',
      ':memory:',
      'postgresql://u:p@h/db',
      'POSTGRES://h/db',
    ]) {
      expect(validateRelayOptions({ database, sources: [source] }).database).toBe(database)
    }
  })
})

describe('values never echoed', () => {
  it('a secret put where a number or a flag goes is described by its type only', () => {
    const problems = problemsOf({
      port: 'tok-secret-1',
      allowPrivateNetworks: 'tok-secret-2',
      sources: ['tok-secret-3'],
    })
    expect(problems.map((p) => p.field)).toEqual(['port', 'allowPrivateNetworks', 'sources[0]'])
    expect(JSON.stringify(problems)).not.toMatch(/tok-secret/)
  })
})
