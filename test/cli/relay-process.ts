import { type ChildProcess, spawn } from 'node:child_process'
import { waitFor } from '../support/wait-for'

/** A `tracklet` process started by a test: its output so far, and how it ended. */
export interface TrackletProcess {
  child: ChildProcess
  stdout: () => string
  stderr: () => string
  exited: Promise<number | null>
}

const started: ChildProcess[] = []

/**
 * Starts the built command with `args` and exactly the environment `env` (plus PATH), so an
 * ambient DATABASE_URL or DEBUG of the machine running the tests never changes what it does.
 */
export function startTracklet(cliPath: string, args: string[], env: Record<string, string> = {}): TrackletProcess {
  const child = spawn(process.execPath, [cliPath, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env['PATH'] ?? '', ...env },
  })
  started.push(child)
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)))
  return { child, stdout: () => stdout, stderr: () => stderr, exited }
}

/** Runs the command to its end. */
export async function runTracklet(
  cliPath: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const run = startTracklet(cliPath, args, env)
  const code = await run.exited
  return { code, stdout: run.stdout(), stderr: run.stderr() }
}

/** Waits for a relay process to print its URL, and returns it. */
export function listeningUrl(run: TrackletProcess): Promise<string> {
  return waitFor(() => {
    if (run.child.exitCode !== null) throw new Error(`the relay exited: ${run.stderr()}`)
    return /listening on (http:\/\/\S+)/.exec(run.stdout())?.[1]
  }, 'the relay to print its URL')
}

/** Stops what is still running (after each test). */
export async function stopAll(): Promise<void> {
  for (const child of started.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM')
      await new Promise((resolve) => child.once('close', resolve))
    }
  }
}
