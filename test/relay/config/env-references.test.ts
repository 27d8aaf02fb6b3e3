// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are config values holding ${NAME} references, not templates
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { loadRelayConfig, type RelayConfigError } from '../../../src/relay/index'

const dir = mkdtempSync(join(tmpdir(), 'tracklet-env-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function writeConfig(name: string, config: unknown): string {
  const path = join(dir, name)
  writeFileSync(path, JSON.stringify(config))
  return path
}

// A config that holds no secret: each comes from the environment.
const config = {
  adminToken: '${TRACKLET_ADMIN_TOKEN}',
  database: '${DATABASE}',
  sources: [
    {
      name: 'web',
      writeKey: '${WEB_WRITE_KEY}',
      destinations: {
        Webhooks: {
          webhooks: [
            { url: 'https://hooks.example.com/${HOOK_PATH}', headers: { Authorization: 'Bearer ${HOOK_TOKEN}' } },
          ],
          sharedSecret: '${WEBHOOK_SECRET}',
        },
      },
    },
  ],
}
const env = {
  TRACKLET_ADMIN_TOKEN: 'admin-from-env-0123456789',
  DATABASE: 'postgres://tracklet:pw-from-env@db:5432/tracklet',
  WEB_WRITE_KEY: 'wk-from-env',
  HOOK_PATH: 'tracklet',
  HOOK_TOKEN: 'hook-token-from-env',
  WEBHOOK_SECRET: 'secret-from-env',
}

describe('${NAME} in a config file', () => {
  it('is read from the environment, as a whole value or inside one', async () => {
    const options = await loadRelayConfig(writeConfig('env.json', config), env)
    expect(options).toMatchObject({
      adminToken: env.TRACKLET_ADMIN_TOKEN,
      database: env.DATABASE,
      sources: [
        {
          writeKey: 'wk-from-env',
          destinations: {
            Webhooks: {
              webhooks: [
                { url: 'https://hooks.example.com/tracklet', headers: { Authorization: 'Bearer hook-token-from-env' } },
              ],
              sharedSecret: 'secret-from-env',
            },
          },
        },
      ],
    })
  })

  it('an unset (or empty) variable is an error naming it and the field, with every other problem', async () => {
    const { WEB_WRITE_KEY: _, ...partial } = env
    const error = (await loadRelayConfig(writeConfig('unset.json', { ...config, port: -1 }), {
      ...partial,
      HOOK_TOKEN: '',
    }).catch((caught: unknown) => caught)) as RelayConfigError
    expect(error.code).toBe('ERR_RELAY_CONFIG')
    expect(error.problems.map((p) => p.field)).toEqual([
      'sources[0].writeKey',
      'sources[0].destinations.Webhooks.webhooks[0].headers.Authorization',
      'port',
    ])
    expect(error.problems[0]!.message).toMatch(/^refers to the environment variable WEB_WRITE_KEY, which is not set/)
    expect(error.problems[1]!.message).toMatch(/HOOK_TOKEN, which is not set \(or is empty\)/)
    // The values of the variables that are set are never printed.
    for (const name of ['TRACKLET_ADMIN_TOKEN', 'DATABASE', 'WEBHOOK_SECRET'] as const)
      expect(error.message).not.toContain(partial[name])
  })

  it('takes $${ as a literal ${, and refuses a reference that is not a name', async () => {
    const literal = { sources: [{ name: 'web', writeKey: 'price $${x}' }] }
    expect((await loadRelayConfig(writeConfig('literal.json', literal), {})).sources[0]!.writeKey).toBe('price ${x}')
    const bad = { sources: [{ name: 'web', writeKey: '${WEB WRITE KEY}' }] }
    await expect(loadRelayConfig(writeConfig('bad.json', bad), {})).rejects.toMatchObject({
      field: 'sources[0].writeKey',
      message: expect.stringMatching(/is not an environment reference/),
    })
  })

  it('reads process.env by default', async () => {
    process.env['TRACKLET_TEST_WRITE_KEY'] = 'wk-process-env'
    try {
      const path = writeConfig('process.json', { sources: [{ name: 'web', writeKey: '${TRACKLET_TEST_WRITE_KEY}' }] })
      expect((await loadRelayConfig(path)).sources[0]!.writeKey).toBe('wk-process-env')
    } finally {
      delete process.env['TRACKLET_TEST_WRITE_KEY']
    }
  })
})

describe('a file that is not JSON', () => {
  it('says where, without quoting the text around the mistake', async () => {
    const path = join(dir, 'broken.json')
    writeFileSync(path, '{\n  "adminToken": xyz-json-secret\n}')
    const error = (await loadRelayConfig(path).catch((caught: unknown) => caught)) as Error
    expect(error.message).toBe(`${path}: is not valid JSON at line 2, column 17: Unexpected token 'x'`)
    expect(error.message).not.toContain('xyz-json-secret')
  })

  it.each([
    [
      'a trailing comma, at the comma',
      '{\n  "port": 8787,\n  "sources": [\n    { "name": "web", "writeKey": "k" }\n  ],\n  "adminToken": "t",\n}\n',
      "at line 6, column 20: a comma before '}' (JSON allows no trailing comma; the parser says: Expected double-quoted property name)",
    ],
    [
      'a missing comma',
      '{\n  "port": 8787\n  "host": "x"\n}',
      "at line 3, column 3: Expected ',' or '}' after property value",
    ],
    ['a name without quotes', '{\n  port: 8787\n}', "at line 2, column 3: Expected property name or '}'"],
    ['a string left open', '{\n  "host": "x\n}', 'at line 2, column 13: Bad control character in string literal'],
    [
      'text after the object',
      '{ "port": 1 }\n}',
      'at line 2, column 1: Unexpected non-whitespace character after JSON',
    ],
    ['an end too early', '{ "port": 1,', ': it ends too early (Expected double-quoted property name)'],
    ['an end too early, inside a list', '{ "sources": [', ': it ends too early (Unexpected end of JSON input)'],
  ])("names %s where it is, with the parser's reason", async (_name, text, where) => {
    const path = join(dir, 'wrong.json')
    writeFileSync(path, text)
    const error = (await loadRelayConfig(path).catch((caught: unknown) => caught)) as Error
    expect(error.message).toBe(`${path}: is not valid JSON ${where}`.replace(' :', ':'))
  })
})
