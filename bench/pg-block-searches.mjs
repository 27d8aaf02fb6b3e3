// node bench/pg-block-searches.mjs [--messages 50000]
//
// The delivery log's searches while blocks hold a backlog (docs/postgres.md, "Leased blocks"):
// `messages` new deliveries with UUID ids enqueued by the store (200 a call), none claimed, then
// each search of the operator page timed five times through the store (ms, each run), and the
// backlog metrics' query. A delivery its block holds is pending by a look-up, not a join: the
// searches that read every held one (a user's pending deliveries, any settled status) pay it.
import { randomUUID } from 'node:crypto'
import { parseArgs } from 'node:util'
import { importSource } from './load-source.mjs'
import { startPostgresServer } from '../test/support/postgres-server.mjs'

const { values: args } = parseArgs({ options: { messages: { type: 'string', default: '50000' } } })
const N = Number(args.messages)
const { openPostgresStore } = await importSource(
  `export { openPostgresStore } from './src/relay/store/postgres/postgres-store'`,
)
const SEARCHES = [
  { status: 'pending', limit: 50 },
  { status: 'pending', source: 'web', limit: 50 },
  { status: 'pending', userId: 'u7', limit: 50 },
  { limit: 50 },
  { status: 'delivered', limit: 50 },
]

const server = await startPostgresServer({ durable: false })
try {
  const store = await openPostgresStore(await server.createDatabase('searches'))
  for (let i = 0; i < N / 200; i++) {
    await store.enqueue(
      Array.from({ length: 200 }, () => {
        const messageId = randomUUID()
        const json = JSON.stringify({ type: 'track', messageId, userId: `u${i}`, event: 'E' })
        return { source: 'web', destination: 'Webhooks', messageId, type: 'track', json }
      }),
    )
  }
  const time = async (run) => {
    const times = []
    for (let k = 0; k < 5; k++) {
      const start = performance.now()
      await run()
      times.push((performance.now() - start).toFixed(1))
    }
    return `${times.join(', ')} ms`
  }
  for (const search of SEARCHES) console.log(`${JSON.stringify(search)}: ${await time(() => store.listNewest(search))}`)
  console.log(`backlog: ${await time(() => store.backlog())}`)
  await store.close()
} finally {
  await server.stop()
}
