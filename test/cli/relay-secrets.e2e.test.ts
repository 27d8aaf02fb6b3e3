// biome-ignore-all lint/suspicious/noTemplateCurlyInString: config values holding ${NAME} references, not templates
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { freshPostgresDatabase } from '../support/postgres'
import { listeningUrl, runTracklet, startTracklet, stopAll, useCli } from '../support/cli-process'

// Issue 18, point 4: no secret in any output, on any path. The built relay is started with each
// kind of broken config and database value, each holding a known secret, and everything it
// prints (stdout and stderr, the log included) is searched for that secret.

const SECRET = 'Sekr3t-9f2c7e'

// Built once for the file; registered before the afterEach below, which (run first) stops what a
// test left running with SIGTERM before useCli's own teardown kills anything still there.
const cli = useCli()
const dir = mkdtempSync(join(tmpdir(), 'tracklet-secrets-'))

afterEach(stopAll)
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true })
})

const hooks = (entry: Record<string, unknown>, more: Record<string, unknown> = {}) => ({
  Webhooks: { webhooks: [{ url: 'https://hooks.example.com/a', ...entry }], ...more },
})
const source = { name: 'web', writeKey: 'wk-web', destinations: hooks({}) }
const base = { port: 0, database: ':memory:', adminToken: 'admin-token-long-enough', sources: [source] }

/** Forms a secret may be printed in: as is, URL-encoded, in Basic credentials. */
function forms(secret: string): string[] {
  return [secret, encodeURIComponent(secret), Buffer.from(secret).toString('base64').replace(/=+$/, '')]
}

function expectNoSecret(output: string): void {
  for (const form of forms(SECRET)) expect(output).not.toContain(form)
}

let count = 0
function configFile(config: unknown): string {
  const path = join(dir, `config-${++count}.json`)
  writeFileSync(path, typeof config === 'string' ? config : JSON.stringify(config))
  return path
}

// Each a config (object or raw text) that the relay must refuse, a secret inside it.
const BROKEN_CONFIGS: [string, unknown][] = [
  ['not JSON, the mistake next to a write key', `{"sources":[{"name":"web","writeKey": ${SECRET}}]}`],
  ['not JSON, a write key left unquoted at the end', `{"sources":[{"name":"web","writeKey":"${SECRET}`],
  [
    'a write key used twice',
    {
      ...base,
      sources: [
        { ...source, writeKey: SECRET },
        { ...source, name: 'ios', writeKey: SECRET },
      ],
    },
  ],
  ['a token where a number goes', { ...base, port: SECRET }],
  ['a token where a flag goes', { ...base, allowPrivateNetworks: SECRET }],
  ['a token as a source', { ...base, sources: [SECRET] }],
  ['a token under a misspelt key', { ...base, metricToken: SECRET, adminTokn: SECRET }],
  [
    'a write key as a number, beside a secret header',
    { ...base, sources: [{ ...source, writeKey: 1, destinations: hooks({ headers: { Authorization: SECRET } }) }] },
  ],
  [
    'a header value with a line break',
    {
      ...base,
      sources: [{ ...source, destinations: hooks({ headers: { Authorization: `Bearer ${SECRET}\r\nX: y` } }) }],
    },
  ],
  [
    'a header value beyond U+00FF',
    { ...base, sources: [{ ...source, destinations: hooks({ headers: { 'X-Key': `${SECRET}\u2603` } }) }] },
  ],
  [
    'a webhook URL with credentials',
    {
      ...base,
      sources: [
        { ...source, destinations: { Webhooks: { webhooks: [{ url: `https://user:${SECRET}@hooks.example.com/` }] } } },
      ],
    },
  ],
  [
    'a bad Standard Webhooks secret',
    {
      ...base,
      sources: [{ ...source, destinations: hooks({}, { standardWebhooks: { secrets: [`whsec_${SECRET}!!`] } }) }],
    },
  ],
  [
    'standardWebhooks without sharedSecret, a secret header beside',
    {
      ...base,
      sources: [{ ...source, destinations: hooks({ headers: { 'X-Key': SECRET } }, { standardWebhooks: true }) }],
    },
  ],
  ['a reference inside a secret that is not a name', { ...base, adminToken: `${SECRET}\${not a name}` }],
  ['an unset variable beside a set one', { ...base, adminToken: '${ADMIN_TOKEN_SET}', metricsToken: '${UNSET_TOKEN}' }],
]

// Each a database value that cannot be opened (or must be refused), holding the password.
const postgresHost = '127.0.0.1:55999/tracklet'
const BROKEN_DATABASES: [string, string | (() => Promise<string>)][] = [
  ['postgress://', `postgress://tracklet:${SECRET}@${postgresHost}`],
  ['pg://', `pg://tracklet:${SECRET}@${postgresHost}`],
  ['a leading space', ` postgres://tracklet:${SECRET}@${postgresHost}`],
  ['a trailing newline', `postgres://tracklet:${SECRET}@${postgresHost}\n`],
  ['POSTGRES:// with nothing listening', `POSTGRES://tracklet:${SECRET}@127.0.0.1:1/tracklet`],
  ['a password in the query string', `postgresql://tracklet@127.0.0.1:1/tracklet?password=${SECRET}`],
  ['an encoded password', `postgres://tracklet:${encodeURIComponent(`${SECRET}@/:`)}@127.0.0.1:1/tracklet`],
  ['no scheme at all', `tracklet:${SECRET}@127.0.0.1:5432/tracklet`],
  [
    'a wrong password for a real server',
    async () => {
      const url = new URL(await freshPostgresDatabase())
      url.password = SECRET
      return url.href
    },
  ],
]

describe('nothing the relay prints holds a secret', () => {
  it.each(BROKEN_CONFIGS)('a broken config: %s (started, and --check)', async (_name, config) => {
    const path = configFile(config)
    const env = { ADMIN_TOKEN_SET: SECRET }
    for (const args of [
      ['relay', '--config', path],
      ['relay', '--check', '--config', path],
    ]) {
      const result = await runTracklet(cli.path, args, env)
      expect(result.code).toBe(1)
      expect(result.stderr).toMatch(/^tracklet relay: /)
      expectNoSecret(result.stdout + result.stderr)
    }
  })

  it.each(BROKEN_DATABASES)('a database value: %s (config, --database, DATABASE_URL)', async (_name, value) => {
    const database = typeof value === 'string' ? value : await value()
    const named = configFile({ ...base, database })
    const unnamed = configFile({ ...base, database: undefined })
    const runs: [string[], Record<string, string>][] = [
      [['relay', '--config', named], {}],
      [['relay', '--config', unnamed, '--database', database], {}],
      [['relay', '--config', unnamed], { DATABASE_URL: database }],
      [['relay', '--config', unnamed, '--check'], { DATABASE_URL: database }],
    ]
    // --check opens nothing: a well-formed URL of a server that is not there passes it.
    const wellFormed = /^postgres(ql)?:\/\/\S+$/i.test(database)
    for (const [args, env] of runs) {
      const result = await runTracklet(cli.path, args, env)
      expect(result.code).toBe(args.includes('--check') && wellFormed ? 0 : 1)
      expect(result.stdout + result.stderr).toMatch(/^tracklet relay: /)
      expectNoSecret(result.stdout + result.stderr)
    }
  })

  it('a misspelt flag given a secret', async () => {
    const result = await runTracklet(cli.path, ['relay', '--config', 'x.json', `--databse=postgres://u:${SECRET}@h/db`])
    expect(result.code).toBe(2)
    expectNoSecret(result.stdout + result.stderr)
  })

  it.each(['text', 'json'])(
    'a relay that starts, warns and closes, every secret set (LOG_FORMAT=%s)',
    async (format) => {
      const database = new URL(await freshPostgresDatabase())
      database.password = database.password || 'unused'
      const config = configFile({
        port: 0,
        // Short, to draw the warning; still a secret.
        adminToken: '${ADMIN_TOKEN}',
        metricsToken: '${METRICS_TOKEN}',
        sources: [
          { name: 'ios', writeKey: `${SECRET}-ios` },
          {
            name: 'web',
            writeKey: '${WRITE_KEY}',
            destinations: hooks(
              { url: `http://127.0.0.1:9/hook?token=${SECRET}-query`, headers: { Authorization: '${HEADER}' } },
              { sharedSecret: `${SECRET}-shared`, standardWebhooks: { secrets: [`${SECRET}-standard`] } },
            ),
          },
        ],
      })
      const relay = startTracklet(cli.path, ['relay', '--config', config], {
        DATABASE_URL: database.href,
        LOG_FORMAT: format,
        ADMIN_TOKEN: SECRET.slice(0, 12),
        METRICS_TOKEN: `${SECRET}-metrics`,
        WRITE_KEY: `${SECRET}-web`,
        HEADER: `Bearer ${SECRET}-header`,
      })
      await listeningUrl(relay)
      relay.child.kill('SIGTERM')
      const code = await relay.exited
      // On a failure, how it ended (a signal's name when it did not exit by itself) and what it printed.
      expect(code, `ended by ${relay.child.signalCode ?? `exit ${code}`}:\n${relay.output()}`).toBe(0)
      const output = relay.stdout() + relay.stderr()
      expect(output).toMatch(/adminToken is shorter than 16 characters/)
      expect(output).toMatch(/127\.0\.0\.1 is a loopback address/)
      expect(output).toContain(`postgres store at ${database.host}${database.pathname}`)
      expectNoSecret(output)
      expect(output).not.toContain(SECRET.slice(0, 12))
    },
  )
})
