import pg from 'pg'
import { importSource } from './load-source.mjs'
const { POSTGRES_STATEMENTS: SQL, POSTGRES_REPLAY_STATEMENTS: R } = await importSource(`
  export { POSTGRES_STATEMENTS } from './src/relay/store/postgres/statements'
  export { POSTGRES_REPLAY_STATEMENTS } from './src/relay/store/postgres/postgres-replays'`)
const c = new pg.Client({ connectionString: process.env.URL })
await c.connect()
const which = process.argv[2]
const DAY = 86400000
const now = Date.now()
const since = Math.floor((now - 7 * DAY) / DAY) * DAY + 3 * DAY
const cases = {
  userFailed: [SQL.listNewest(['userId', 'status'], false), ['user-100', 'failed', 50]],
  failed: [SQL.listNewest(['status'], false), ['failed', 50]],
  failed2: [SQL.listNewest(['status'], true), ['failed', 500000, 50]],
  pending2: [SQL.listNewest(['status'], true), ['pending', 500000, 50]],
  dead: [SQL.countDeadLetters([]), [1000000]],
  backlog: [SQL.backlog, []],
  replayFailed: [R?.count(['status', 'since', 'until']), ['failed', since, since + DAY - 1, 1000000]],
  replayDelivered: [R?.count(['status', 'since', 'until']), ['delivered', since, since + DAY - 1, 1000000]],
  replay: [R?.count(['since', 'until']), [since, since + DAY - 1, 1000000]],
}
const [text, values] = cases[which]
console.log(text)
const { rows } = await c.query(`EXPLAIN (ANALYZE, BUFFERS) ${text}`, values)
console.log(rows.map((r) => r['QUERY PLAN']).join('\n'))
await c.end()
