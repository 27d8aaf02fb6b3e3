import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { eventsModule } from '../../src/cli/plan-types'
import { parseTypegenArgs, runTypegen } from '../../src/cli/typegen'
import type { TrackingPlan } from '../../src/relay/config/plan'
import { request } from 'undici'
import { SOURCE_NAME_RULE } from '../../src/relay/config/sources'
import { validateRelayOptions } from '../../src/relay/config/validate'
import { admin, startRelay } from '../relay/helpers'
import { startHttpReceiver } from '../support/http-receiver'

// `tracklet typegen` (docs/plans.md, "Typed calls"): the event map it prints, compiled by
// tsc (strict) with the SDK's Analytics<Events>, accepts the calls the plan allows and refuses the
// others.

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')

const PLAN: TrackingPlan = {
  events: {
    'Order Completed': {
      properties: {
        type: 'object',
        properties: {
          revenue: { type: 'number' },
          currency: { enum: ['EUR', 'USD'] },
          items: { type: 'array', items: { $ref: '#/definitions/item' } },
          note: { type: ['string', 'null'] },
        },
        required: ['revenue'],
        additionalProperties: false,
        definitions: { item: { type: 'object', properties: { sku: { type: 'string' } }, required: ['sku'] } },
      },
    },
    'Signed Up': { properties: { type: 'object', properties: { plan: { type: 'string' } } } },
    Anything: { properties: true },
  },
}

let dir: string
beforeAll(async () => {
  await mkdir(join(ROOT, '.tmp'), { recursive: true })
  dir = await mkdtemp(join(ROOT, '.tmp', 'typegen-'))
})
afterAll(() => rm(dir, { recursive: true, force: true }))

/**
 * Compiles each of `usages` (a module of its own, importing the SDK and the generated `events.ts`)
 * in one run of tsc, strict; returns tsc's output (its errors, one `file(line,col): error` each).
 */
async function compile(events: string, usages: Record<string, string>): Promise<string> {
  const folder = await mkdtemp(join(dir, 'compile-'))
  await writeFile(join(folder, 'events.ts'), events)
  const sdk = join(ROOT, 'src', 'index').replace(/\\/g, '/')
  const head = `import { Analytics } from '${sdk}'\nimport type { Events } from './events'\nconst analytics = new Analytics<Events>('WRITE_KEY')\n`
  for (const [name, usage] of Object.entries(usages)) await writeFile(join(folder, `${name}.ts`), `${head}${usage}\n`)
  const flags = [
    '--noEmit',
    '--strict',
    '--exactOptionalPropertyTypes',
    '--noUncheckedIndexedAccess',
    '--target',
    'ES2022',
  ]
  const more = ['--module', 'ESNext', '--moduleResolution', 'Bundler', '--types', 'node', '--skipLibCheck']
  const files = Object.keys(usages).map((name) => join(folder, `${name}.ts`))
  try {
    return (await promisify(execFile)(process.execPath, [TSC, ...flags, ...more, ...files])).stdout
  } catch (error) {
    return (error as { stdout: string }).stdout
  }
}

const RIGHT = `
analytics.track({ userId: '1', event: 'Order Completed', properties: { revenue: 9.99 } })
analytics.track({ userId: '1', event: 'Order Completed', properties: { revenue: 1, currency: 'EUR', items: [{ sku: 'a' }], note: null } })
analytics.track({ userId: '1', event: 'Signed Up' })
analytics.track({ userId: '1', event: 'Signed Up', properties: { plan: 'pro', anythingElse: 1 } })
analytics.track({ anonymousId: 'a', event: 'Anything', properties: { whatever: [1] } })`

const WRONG: Record<string, string> = {
  unplanned: `analytics.track({ userId: '1', event: 'Order Complete', properties: { revenue: 1 } })`,
  wrongType: `analytics.track({ userId: '1', event: 'Order Completed', properties: { revenue: '9.99' } })`,
  missingRequired: `analytics.track({ userId: '1', event: 'Order Completed', properties: { currency: 'EUR' } })`,
  noProperties: `analytics.track({ userId: '1', event: 'Order Completed' })`,
  notAllowed: `analytics.track({ userId: '1', event: 'Order Completed', properties: { revenue: 1, coupon: 'X' } })`,
  outsideEnum: `analytics.track({ userId: '1', event: 'Order Completed', properties: { revenue: 1, currency: 'GBP' } })`,
  itemMissingKey: `analytics.track({ userId: '1', event: 'Order Completed', properties: { revenue: 1, items: [{}] } })`,
  nestedWrongType: `analytics.track({ userId: '1', event: 'Signed Up', properties: { plan: 3 } })`,
}

describe('the event map of tracklet typegen, compiled with Analytics<Events>', () => {
  const events = eventsModule(PLAN, 'web')
  let output: string
  beforeAll(async () => {
    output = await compile(events, { right: RIGHT, ...WRONG })
  }, 120_000)

  it('exports exactly one type, Events', () => {
    expect([...events.matchAll(/^export /gm)]).toHaveLength(1)
    expect(events).toContain('export type Events = {')
  })

  it('compiles the calls the plan allows', () => {
    expect(output).not.toMatch(/right\.ts\(/)
  })

  it.each(Object.keys(WRONG))('refuses a call that breaks the plan: %s', (name) => {
    expect(output).toMatch(new RegExp(`${name}\\.ts\\(4,\\d+\\): error TS`))
  })
})

describe('tracklet typegen', () => {
  async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = ''
    let err = ''
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      out += String(chunk)
      return true
    })
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      err += String(chunk)
      return true
    })
    try {
      return { code: await runTypegen(args), out, err }
    } finally {
      stdout.mockRestore()
      stderr.mockRestore()
    }
  }

  it('prints the map from a config file, without needing its secrets', async () => {
    const config = join(dir, 'tracklet.config.json')
    // A `${NAME}` reference to a variable that is not set: typegen reads only the plan.
    const writeKey = ['$', '{UNSET_WRITE_KEY}'].join('')
    await writeFile(config, JSON.stringify({ sources: [{ name: 'web', writeKey, schema: { plan: PLAN } }] }))
    const { code, out } = await run(['--config', config, '--source', 'web'])
    expect(code).toBe(0)
    expect(out).toBe(eventsModule(PLAN, 'web'))
    const missing = await run(['--config', config, '--source', 'app'])
    expect(missing).toMatchObject({ code: 1, err: expect.stringContaining('no source named "app"') })
  })

  it('refuses a plan whose schema does not compile, naming its path', async () => {
    const config = join(dir, 'broken.json')
    const broken = { events: { A: { properties: { type: 'nubmer' } } } }
    await writeFile(config, JSON.stringify({ sources: [{ name: 'web', writeKey: 'k', schema: { plan: broken } }] }))
    const { code, err } = await run(['--config', config, '--source', 'web'])
    expect(code).toBe(1)
    expect(err).toContain('schema.plan.events["A"].properties: is not a valid JSON Schema')
  })

  it('reads the plan of a running relay (GET /v1/sources/:name) with the admin token', async () => {
    // A stand-in for the relay's config API (docs/relay.md): the source as GET /v1/sources/:name answers it.
    const relay = await startHttpReceiver((req, res) => {
      if (req.headers.authorization !== 'Bearer admin-secret') return res.writeHead(401).end('{}')
      if (req.url !== '/v1/sources/web') return res.writeHead(404).end('{"error":{"code":"ERR_NOT_FOUND"}}')
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(
        JSON.stringify({
          name: 'web',
          provisioned: false,
          enabled: true,
          writeKeys: [{ id: 'k1', prefix: 'wk_', createdAt: '2026-11-26T00:00:00.000Z' }],
          destinations: {},
          schema: { plan: PLAN, unplanned: 'allow', violations: 'omit' },
        }),
      )
    })
    try {
      const { code, out } = await run(['--relay', relay.origin, '--admin-token', 'admin-secret', '--source', 'web'])
      expect(code).toBe(0)
      expect(out).toBe(eventsModule(PLAN, 'web'))
      expect(relay.requests.map((r) => r.url)).toEqual(['/v1/sources/web'])
      const unknown = await run(['--relay', relay.origin, '--admin-token', 'admin-secret', '--source', 'app'])
      expect(unknown).toMatchObject({ code: 1, err: expect.stringContaining('no source named "app"') })
      const refused = await run(['--relay', relay.origin, '--admin-token', 'wrong', '--source', 'web'])
      expect(refused).toMatchObject({ code: 1, err: expect.stringContaining('401') })
      expect(refused.err).not.toContain('wrong')
    } finally {
      await relay.close()
    }
  })

  it('refuses a bad command line', () => {
    expect(parseTypegenArgs(['--config', 'c.json'])).toEqual({ problem: '--source NAME is required' })
    expect(parseTypegenArgs(['--source', 'web'])).toEqual({ problem: 'give either --config FILE or --relay URL' })
    expect(parseTypegenArgs(['--relay', 'http://x', '--source', 'web'], {})).toMatchObject({
      problem: expect.stringContaining('--admin-token'),
    })
  })
})

// A source named to end the generated file's comment line (U+2028 is a line terminator to
// TypeScript, and JSON.stringify leaves it raw): refused as a name, at the API and in the file,
// and escaped in every text typegen writes whatever it is given.
const HOSTILE = 'shop\u2028export const pwned = 1; //'

describe('hostile text in the generated code', () => {
  const plan: TrackingPlan = {
    events: {
      [HOSTILE]: {
        properties: {
          type: 'object',
          properties: { 'a\u2029export const also = 2; //': { enum: ['*/ "quoted"\n', 'x\u2028y'] } },
        },
      },
    },
  }
  const events = eventsModule(plan, HOSTILE)

  it('escapes U+2028, U+2029, quotes and newlines: still one export, and nothing else compiles in', async () => {
    expect([...events.matchAll(/^export /gm)]).toHaveLength(1)
    expect(events).not.toMatch(/[\u2028\u2029]/)
    const output = await compile(events, {
      injected: `import { pwned } from './events'\nvoid pwned`,
      planned: `analytics.track({ userId: '1', event: ${JSON.stringify(HOSTILE).replace('\u2028', '\\u2028')} })`,
    })
    expect(output).toMatch(/injected\.ts\(4,\d+\): error TS2305/)
    expect(output).not.toMatch(/events\.ts\(|planned\.ts\(/)
  }, 120_000)

  it('refuses the name in the config file and through PUT /v1/sources/:name, naming the field', async () => {
    expect(() => validateRelayOptions({ sources: [{ name: HOSTILE, writeKey: 'wk' }] })).toThrow(
      expect.objectContaining({
        problems: [
          {
            field: 'sources[0].name',
            message: expect.stringContaining(`must be ${SOURCE_NAME_RULE}, got "shop\\u2028export`),
          },
        ],
      }),
    )
    const relay = await startRelay('http://127.0.0.1:9/unused')
    try {
      const put = (name: string) =>
        request(`${relay.url}/v1/sources/${encodeURIComponent(name)}`, {
          method: 'PUT',
          headers: { ...admin, 'content-type': 'application/json' },
          body: JSON.stringify({ destinations: {} }),
        })
      const refused = await put(HOSTILE)
      expect(refused.statusCode).toBe(400)
      expect(await refused.body.json()).toMatchObject({
        error: { problems: [{ field: 'name', message: expect.stringContaining(SOURCE_NAME_RULE) }] },
      })
      const created = await put('shop-eu.v2')
      expect(created.statusCode).toBe(201)
      await created.body.dump()
    } finally {
      await relay.close()
    }
  })
})
