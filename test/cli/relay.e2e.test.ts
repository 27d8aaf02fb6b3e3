// biome-ignore-all lint/suspicious/noTemplateCurlyInString: config values holding ${NAME} references, not templates
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { waitFor } from '../support/wait-for'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { newDatabase, STORE_KINDS } from '../support/stores'
import { listeningUrl, runTracklet, startTracklet, stopAll, useCli } from '../support/cli-process'

// `tracklet relay` as an operator runs it: the built command, in its own process.

// Built once for the file; registered before the afterEach below, which (run first) stops what a
// test left running with SIGTERM before useCli's own teardown kills anything still there.
const cli = useCli()
const dir = mkdtempSync(join(tmpdir(), 'tracklet-relay-cli-'))

afterEach(stopAll)
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true })
})

function writeConfig(name: string, config: Record<string, unknown>): string {
  const path = join(dir, `${name}.json`)
  writeFileSync(path, JSON.stringify(config))
  return path
}

const ADMIN_TOKEN = 'an-admin-token-long-enough'
const source = {
  name: 'web',
  writeKey: 'wk-cli',
  destinations: { Webhooks: { webhooks: [{ url: 'https://hooks.example.com/a' }] } },
}
// Nothing listens there: a relay that picked it would fail to start.
const UNREACHABLE_POSTGRES = 'postgres://tracklet:pw@127.0.0.1:1/tracklet'

describe('tracklet relay --check', () => {
  it('validates (environment references included), prints every warning, opens nothing, exits 0', async () => {
    const database = join(dir, 'never-created.db')
    const config = writeConfig('check-ok', {
      database,
      sources: [
        { ...source, writeKey: '${WEB_WRITE_KEY}' },
        { name: 'ios', writeKey: 'wk-ios' },
        {
          name: 'lan',
          writeKey: 'wk-lan',
          destinations: { Webhooks: { webhooks: [{ url: 'http://192.168.1.20/hook' }] } },
        },
      ],
    })
    const result = await runTracklet(cli.path, ['relay', '--check', '--config', config], { WEB_WRITE_KEY: 'wk-env' })
    expect(result.code).toBe(0)
    expect(result.stdout.split('\n')).toEqual([
      `tracklet relay: the config is valid (3 sources, sqlite store at ${database}, 3 warnings)`,
      // It opens nothing, so it says what it could not check.
      expect.stringMatching(/^tracklet relay: the sources created through the admin API .* are not checked/),
      '',
    ])
    expect(result.stderr.split('\n').filter(Boolean)).toEqual([
      'tracklet relay: warning: sources[1] (ios) has no destination: its messages are accepted and never delivered',
      'tracklet relay: warning: adminToken is not set: the admin API and the operator page are off',
      'tracklet relay: warning: sources[2].destinations.Webhooks.webhooks[0].url: 192.168.1.20 is a private address and allowPrivateNetworks is false: every delivery to it will fail',
    ])
    expect(existsSync(database)).toBe(false)
  })

  it('prints every problem, one per line, and exits 1', async () => {
    const config = writeConfig('check-bad', {
      adminToken: ADMIN_TOKEN,
      port: 'eighty',
      sources: [{ name: 'web', writeKey: '${WEB_WRITE_KEY}', destination: {} }],
    })
    const result = await runTracklet(cli.path, ['relay', '--config', config, '--check'])
    expect(result.code).toBe(1)
    expect(result.stdout).toBe('')
    expect(result.stderr.split('\n').filter(Boolean)).toEqual([
      `tracklet relay: sources[0].writeKey: refers to the environment variable WEB_WRITE_KEY, which is not set (or is empty) (in ${config})`,
      `tracklet relay: port: must be an integer from 0 to 65535, got a string (in ${config})`,
      `tracklet relay: sources[0].destination: is not a source setting (known: name, writeKey, destinations, schema) (did you mean \`destinations\`?) (in ${config})`,
    ])
  })

  it('checks the command line too, naming where a bad value came from', async () => {
    const config = writeConfig('check-flags', { adminToken: ADMIN_TOKEN, sources: [source] })
    const result = await runTracklet(cli.path, ['relay', '--config', config, '--check', '--port', '70000'], {
      DATABASE_URL: 'postgress://tracklet:pw@db/tracklet',
    })
    expect(result.code).toBe(1)
    expect(result.stderr.split('\n').filter(Boolean)).toEqual([
      'tracklet relay: --port (port): must be an integer from 0 to 65535, got number 70000',
      'tracklet relay: DATABASE_URL (database): is a URL with the scheme "postgress:" (did you mean `postgres`?): the relay opens postgres:// (or postgresql://) URLs and SQLite file paths',
    ])
  })
})

describe('tracklet relay --port --host', () => {
  it('override the config', async () => {
    // The config's port and host cannot be used here: the flags must win for the relay to start.
    const config = writeConfig('override', {
      port: 1,
      host: '192.0.2.1',
      database: ':memory:',
      adminToken: ADMIN_TOKEN,
      sources: [source],
    })
    const relay = startTracklet(cli.path, ['relay', '--config', config, '--port', '0', '--host', '127.0.0.1'])
    const url = await listeningUrl(relay)
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(url).not.toBe('http://127.0.0.1:1')
    expect((await fetch(`${url}/healthz`)).status).toBe(200)
  })

  it('refuse a port that is not a number, in one line', async () => {
    const result = await runTracklet(cli.path, ['relay', '--config', 'x.json', '--port', 'http'])
    expect(result).toMatchObject({
      code: 2,
      stderr: 'tracklet relay: --port must be a whole number from 0 to 65535, got "http" (see tracklet relay --help)\n',
    })
    const misspelt = await runTracklet(cli.path, ['relay', '--config', 'x.json', '--prot', '1'])
    expect(misspelt.stderr).toBe(
      'tracklet relay: unknown flag --prot (did you mean `--port`?) (see tracklet relay --help)\n',
    )
  })
})

describe.each(STORE_KINDS)('which database (%s)', (kind) => {
  it('DATABASE_URL is used only when the config names no database; the start-up line says which and where', async () => {
    const database = await newDatabase(kind, dir, `from-env-${kind}.db`)
    const config = writeConfig(`no-database-${kind}`, { port: 0, adminToken: ADMIN_TOKEN, sources: [source] })
    const relay = startTracklet(cli.path, ['relay', '--config', config], { DATABASE_URL: database })
    await listeningUrl(relay)
    const where =
      kind === 'sqlite'
        ? `sqlite store at ${database}`
        : `postgres store at ${new URL(database).host}${new URL(database).pathname}`
    expect(relay.stdout()).toMatch(
      new RegExp(`listening on http://\\S+ \\(${escapeRegExp(where)}, from DATABASE_URL\\)\\n`),
    )
    // The log is written off the event loop: its line may come just after stdout's.
    const logged = new RegExp(`listening on http://\\S+ with 1 sources? \\(${escapeRegExp(where)}\\)`)
    await waitFor(() => (logged.test(relay.stderr()) ? true : undefined), 'the start-up log line')
  })

  it("the config's database beats DATABASE_URL; --database beats both", async () => {
    const database = await newDatabase(kind, dir, `named-${kind}.db`)
    const named = writeConfig(`named-${kind}`, { port: 0, database, adminToken: ADMIN_TOKEN, sources: [source] })
    const fromConfig = startTracklet(cli.path, ['relay', '--config', named], { DATABASE_URL: UNREACHABLE_POSTGRES })
    await listeningUrl(fromConfig)
    expect(fromConfig.stdout()).not.toContain('from DATABASE_URL')
    await stopAll()

    const elsewhere = writeConfig(`elsewhere-${kind}`, {
      port: 0,
      database: UNREACHABLE_POSTGRES,
      adminToken: ADMIN_TOKEN,
      sources: [source],
    })
    const fromFlag = startTracklet(cli.path, ['relay', '--config', elsewhere, '--database', database], {
      DATABASE_URL: UNREACHABLE_POSTGRES,
    })
    await listeningUrl(fromFlag)
    expect(fromFlag.stdout()).toContain(', from --database)')
  })
})

function escapeRegExp(text: string): string {
  return text.replace(/[$()*+.?[\\\]^{|}/]/g, '\\$&')
}
