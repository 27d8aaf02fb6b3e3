// A relay whose webhook never answers, for the benches of ingest alone (bench/ingest-only.mjs,
// bench/archive.mjs): its deliveries hold their first requests open, so nothing but ingest is
// written. The relay runs in a child process (bench/relay-server.mjs, or another worktree's
// build of it), which answers 'usage' with its CPU so far and 'stop' once it has stopped.
import { fork } from 'node:child_process'
import http from 'node:http'
import { WRITE_KEY } from './events.mjs'

export { WRITE_KEY }

/**
 * Starts the relay built at `server` on `database` (a file or a PostgreSQL URL), its one source
 * `bench` sending to a webhook that never answers; `execArgv` for its process (a --cpu-prof).
 * Answers its URL, its CPU so far in ms (`cpuMs()`), and `stop()`.
 */
export async function startHoldingRelay(server, database, execArgv = []) {
  const holding = http.createServer((req) => req.resume())
  await new Promise((done) => holding.listen(0, '127.0.0.1', done))
  const options = {
    port: 0,
    database,
    allowPrivateNetworks: true,
    webhookTimeout: 600_000,
    sources: [
      {
        name: 'bench',
        writeKey: WRITE_KEY,
        destinations: {
          Webhooks: {
            webhooks: [{ url: `http://127.0.0.1:${holding.address().port}/hold` }],
            sharedSecret: 'bench-shared-secret',
          },
        },
      },
    ],
  }
  const child = fork(server, [JSON.stringify(options)], { execArgv })
  const next = () => new Promise((done) => child.once('message', done))
  const { url } = await next()
  return {
    url,
    async cpuMs() {
      child.send('usage')
      return (await next()).cpuMs
    },
    async stop() {
      child.send('stop')
      await next()
      holding.closeAllConnections()
      holding.close()
    },
  }
}
