// `tracklet relay --workers N` under benchmark: the built command started as an operator starts
// it, its CPU read from /proc for the primary and every worker (the primary's children), so the
// figure is the whole relay's, whatever N is. Linux only (/proc).
import { spawn } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'

// /proc/<pid>/stat counts CPU in clock ticks: 100 a second on Linux (USER_HZ, fixed by the ABI).
const TICKS_PER_SECOND = 100

/** The CPU (user + system) process `pid` has used so far, in ms; 0 once it is gone. */
function processCpuMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Fields after the command name (which may hold spaces), from field 3: utime is 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND
  } catch {
    return 0
  }
}

/** The read system calls process `pid` has made so far (from /proc/<pid>/io), 0 once it is gone. */
function processReads(pid) {
  try {
    return Number(/^syscr: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? 0)
  } catch {
    return 0
  }
}

/** The pids of `pid`'s children (the workers, for the primary). */
function childrenOf(pid) {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)
  } catch {
    return []
  }
}

/**
 * Starts `tracklet relay --workers N` (the built CLI at `cliPath`) with `options` as its config
 * file at `configPath`; resolves once it prints its URL.
 */
export function startWorkersRelay(cliPath, configPath, options, workers) {
  writeFileSync(configPath, JSON.stringify(options))
  const child = spawn(process.execPath, [cliPath, 'relay', '--config', configPath, '--workers', String(workers)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn' },
  })
  let stdout = ''
  let stderr = ''
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const exited = new Promise((resolve) => child.once('exit', resolve))
  return new Promise((resolve, reject) => {
    // Once it listens, this rejection is a no-op: stop() reads the exit code instead.
    exited.then((code) => reject(new Error(`tracklet relay --workers ${workers} exited (${code}): ${stderr}`)))
    child.stdout.on('data', (chunk) => {
      stdout += chunk
      const url = /listening on (http:\/\/\S+)/.exec(stdout)?.[1]
      if (url === undefined) return
      child.stdout.removeAllListeners('data')
      child.stdout.resume()
      resolve({
        url,
        /**
         * CPU ms the primary and its workers have used so far (and the primary's own), how many
         * processes, and their read system calls.
         */
        usage: () => {
          const pids = [child.pid, ...childrenOf(child.pid)]
          const cpuMs = pids.reduce((sum, pid) => sum + processCpuMs(pid), 0)
          // Read system calls: a SQLite worker re-reads from the file the pages another changed.
          const reads = pids.reduce((sum, pid) => sum + processReads(pid), 0)
          return { cpuMs, primaryCpuMs: processCpuMs(child.pid), processes: pids.length, reads }
        },
        stop: async () => {
          child.kill('SIGTERM')
          const code = await exited
          if (code !== 0) throw new Error(`tracklet relay --workers ${workers} exited ${code}: ${stderr}`)
        },
      })
    })
  })
}
