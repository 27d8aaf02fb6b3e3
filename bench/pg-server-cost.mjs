// What the PostgreSQL server spends on a phase of the bench: its processes' CPU time (the
// postmaster and every backend it forked, living or reaped, from /proc) and the WAL it wrote
// (pg_current_wal_lsn() before and after). Linux only, like the rest of the relay bench.
import { readdirSync, readFileSync } from 'node:fs'
import pg from 'pg'

// /proc/<pid>/stat times are in clock ticks: 100 a second on Linux (USER_HZ).
const TICKS_PER_SECOND = 100

function stat(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The command name is in parentheses and may hold spaces: fields count from after it.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
    return {
      ppid: Number(fields[1]),
      utime: Number(fields[11]),
      stime: Number(fields[12]),
      cutime: Number(fields[13]),
      cstime: Number(fields[14]),
    }
  } catch {
    return undefined // it exited meanwhile
  }
}

/** The postmaster of the server listening on `port` (its command line names the port). */
function postmasterOf(port) {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0')
      const p = argv.indexOf('-p')
      if (p !== -1 && argv[p + 1] === String(port) && /postgres$/.test(argv[0])) return Number(entry)
    } catch {}
  }
  throw new Error(`no PostgreSQL server found on port ${port}`)
}

/** CPU ms of the server's processes so far: the postmaster, its children, and reaped children. */
function serverCpuMs(postmaster) {
  const own = stat(postmaster)
  if (own === undefined) throw new Error('the PostgreSQL server exited')
  let ticks = own.utime + own.stime + own.cutime + own.cstime
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const child = stat(entry)
    if (child?.ppid === postmaster) ticks += child.utime + child.stime
  }
  return (ticks * 1000) / TICKS_PER_SECOND
}

async function walLsn(adminUrl) {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    const { rows } = await client.query('SELECT pg_current_wal_lsn()::text AS lsn')
    return rows[0].lsn
  } finally {
    await client.end()
  }
}

async function walBytesBetween(adminUrl, from, to) {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    const { rows } = await client.query('SELECT pg_wal_lsn_diff($1, $2)::bigint AS bytes', [to, from])
    return Number(rows[0].bytes)
  } finally {
    await client.end()
  }
}

/**
 * Starts measuring the server (`{ adminUrl, port }`, from test/support/postgres-server.mjs);
 * `stop()` resolves with { cpuMs, walBytes } spent since.
 */
export async function measureServer(server) {
  const postmaster = postmasterOf(server.port)
  const cpuBefore = serverCpuMs(postmaster)
  const lsnBefore = await walLsn(server.adminUrl)
  return {
    async stop() {
      const cpuMs = serverCpuMs(postmaster) - cpuBefore
      const walBytes = await walBytesBetween(server.adminUrl, lsnBefore, await walLsn(server.adminUrl))
      return { cpuMs, walBytes }
    },
  }
}
