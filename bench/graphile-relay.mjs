// The peer of the relay bench: a relay built on graphile-worker (a job queue on PostgreSQL), in its
// own process, taking the same batches on the same route and delivering the same signed webhook
// bodies to the same receiver. Its queue: one job per message, written with addJobs (one statement
// per batch, committed before the 200, as Tracklet's ingest); its worker: graphile-worker's runner
// with its documented batching options (a local queue that fetches jobs in batches, completions
// and failures batched), as many jobs in flight as Tracklet's default concurrency.
// Same IPC as bench/relay-server.mjs: reports its URL; 'usage' → CPU so far; 'stop' → closes.
// Started by bench/graphile-phase.mjs with { database, receiverUrl, writeKey, secret } in argv[2].
import http from 'node:http'
import { Logger, makeWorkerUtils, run } from 'graphile-worker'
import { Agent, request } from 'undici'
import { formatMessage, sign } from '../dist/webhooks/index.js'

const { database, receiverUrl, writeKey, secret, concurrency } = JSON.parse(process.argv[2])
const authorization = `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`
const agent = new Agent({ connections: concurrency, keepAliveTimeout: 30_000 })

// Quiet: it logs a line per job by default, which would cost it CPU Tracklet's relay does not spend.
const logger = new Logger(() => () => {})
const utils = await makeWorkerUtils({ connectionString: database, logger })
await utils.migrate()

const runner = await run({
  connectionString: database,
  concurrency,
  // As its start-up warning advises: a connection per job in flight.
  maxPoolSize: concurrency,
  noHandleSignals: true,
  logger,
  preset: {
    worker: {
      // The documented batching options (graphile-worker 0.17, "Local queue" and "batching"):
      // jobs fetched up to 500 at a time and handed out locally, completions and failures sent
      // back in batches instead of one statement each.
      localQueue: { size: 500 },
      completeJobBatchDelay: 0,
      failJobBatchDelay: 0,
    },
  },
  taskList: {
    async deliver(payload) {
      const body = Buffer.from(JSON.stringify(formatMessage(payload)), 'utf8')
      const response = await request(receiverUrl, {
        method: 'POST',
        dispatcher: agent,
        headers: {
          'user-agent': 'Tracklet/1.0',
          'content-type': 'application/json',
          'x-signature': sign(body, secret),
        },
        body,
      })
      await response.body.dump()
      if (response.statusCode >= 300) throw new Error(`the receiver answered ${response.statusCode}`)
    },
  },
})

const server = http.createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/v1/batch' || req.headers.authorization !== authorization) {
    res.writeHead(401).end()
    req.resume()
    return
  }
  const chunks = []
  req.on('data', (c) => chunks.push(c))
  req.on('end', async () => {
    try {
      const { batch } = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      const context = { library: { name: 'tracklet', version: '0.1.0' } }
      await utils.addJobs(batch.map((message) => ({ identifier: 'deliver', payload: { ...message, context } })))
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true}')
    } catch (error) {
      res.writeHead(500).end(String(error.message))
    }
  })
})
server.keepAliveTimeout = 30_000
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
process.send({ url: `http://127.0.0.1:${server.address().port}` })

process.on('message', async (message) => {
  const cpu = process.cpuUsage()
  if (message === 'usage') return process.send({ cpuMs: (cpu.user + cpu.system) / 1000 })
  if (message !== 'stop') return
  server.closeAllConnections()
  server.close()
  await runner.stop()
  await utils.release()
  await agent.close()
  process.send({ maxRssBytes: process.resourceUsage().maxRSS * 1024, cpuMs: (cpu.user + cpu.system) / 1000 }, () =>
    process.exit(0),
  )
})
