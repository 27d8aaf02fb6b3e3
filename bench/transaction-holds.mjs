// How long a pool's transactions hold their locks, for the benches that measure a migration or a
// retention sweep: each transaction from BEGIN to COMMIT (or ROLLBACK), and, when `from` is given
// (a statement's first words), from that statement to the end of its transaction: where a stricter
// lock begins (a detach, a table lock).
import { performance } from 'node:perf_hooks'

/**
 * Times every transaction run on a connection of `pool` from now on. Answers two arrays the
 * benches read and empty between phases: `holds` (ms, whole transactions) and `fromHolds` (ms,
 * from the statement `from` starts with).
 */
export function timeTransactions(pool, { from } = {}) {
  const holds = []
  const fromHolds = []
  const connect = pool.connect.bind(pool)
  pool.connect = async () => {
    const client = await connect()
    if (!client.timed) {
      client.timed = true
      const query = client.query.bind(client)
      let began
      let strictFrom
      client.query = (...q) => {
        const text = typeof q[0] === 'string' ? q[0] : q[0]?.text
        if (text === 'BEGIN') began = performance.now()
        if (from !== undefined && text?.startsWith(from)) strictFrom = performance.now()
        if ((text === 'COMMIT' || text === 'ROLLBACK') && began !== undefined) {
          holds.push(performance.now() - began)
          if (strictFrom !== undefined) fromHolds.push(performance.now() - strictFrom)
          strictFrom = undefined
        }
        return query(...q)
      }
    }
    return client
  }
  return { holds, fromHolds }
}
