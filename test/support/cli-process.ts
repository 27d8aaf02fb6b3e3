import { type ChildProcess, spawn } from 'node:child_process'
import { afterEach, inject } from 'vitest'
import { waitFor } from './wait-for'

// The `tracklet` command in child processes, as operators run it: the one fixture the CLI, process,
// durability and scale-out suites share.

/** A `tracklet` process started by a test: what it printed so far, and how it ended. */
export interface TrackletProcess {
  child: ChildProcess
  stdout(): string
  stderr(): string
  /** stdout and stderr together, in the order they arrived. */
  output(): string
  /** Resolves with the exit code (`null` when a signal ended it), once its output is all read. */
  exited: Promise<number | null>
}

/** A `tracklet relay` process that printed the URL it listens on. */
export interface RelayProcess extends TrackletProcess {
  url: string
}

const started: ChildProcess[] = []

/** How {@link startTracklet} starts a process. */
export interface StartOptions {
  /** Adds `env` to the test's own environment, rather than to PATH alone. */
  inherit?: boolean
  /**
   * The process outlives the test that started it (one relay that several cases of a file share,
   * started in `beforeAll`): neither {@link stopAll} nor {@link useCli}'s clean-up after each test
   * stops it; the caller does, in `afterAll`.
   */
  sharedByCases?: boolean
}

/**
 * Starts the built command at `cliPath` with `args`. Its environment is exactly `env` (plus PATH),
 * so an ambient DATABASE_URL, LOG_LEVEL or DEBUG of the machine running the tests never changes
 * what it does; `inherit: true` adds `env` to the test's own environment instead.
 */
export function startTracklet(
  cliPath: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
  { inherit = false, sharedByCases = false }: StartOptions = {},
): TrackletProcess {
  const child = spawn(process.execPath, [cliPath, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: inherit ? { ...process.env, ...env } : { PATH: process.env['PATH'] ?? '', ...env },
  })
  if (!sharedByCases) started.push(child)
  let stdout = ''
  let stderr = ''
  let output = ''
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString()
    output += chunk.toString()
  })
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
    output += chunk.toString()
  })
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)))
  return { child, stdout: () => stdout, stderr: () => stderr, output: () => output, exited }
}

/** Runs the command to its end. */
export async function runTracklet(
  cliPath: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const run = startTracklet(cliPath, args, env)
  const code = await run.exited
  return { code, stdout: run.stdout(), stderr: run.stderr() }
}

/** Waits for a relay process to print its URL, and returns it; fails with its output if it exits first. */
export function listeningUrl(run: TrackletProcess): Promise<string> {
  return waitFor(() => {
    if (run.child.exitCode !== null) throw new Error(`the relay exited: ${run.output()}`)
    return /listening on (http:\/\/\S+)/.exec(run.stdout())?.[1]
  }, 'the relay to print its URL')
}

/** Stops, with SIGTERM, every process still running, and waits for each to end (after each test). */
export async function stopAll(): Promise<void> {
  for (const child of started.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM')
      await new Promise((resolve) => child.once('close', resolve))
    }
  }
}

/** What {@link useCli} gives a test file. */
export interface Cli {
  /** The built command's path (valid inside tests). */
  readonly path: string
  /** Starts `tracklet <args>` with the test's environment plus `env`. */
  run(args: readonly string[], env?: NodeJS.ProcessEnv): TrackletProcess
  /** Starts `tracklet relay <args>` and resolves once it prints `listening on <url>`. */
  startRelay(args: readonly string[], env?: NodeJS.ProcessEnv): Promise<RelayProcess>
}

/**
 * The built `tracklet` command for the calling test file: the one build of the run
 * (`cli-global-setup.ts`, as `npm run build` builds it, never touching `dist/`); every process a
 * test started and left running is killed (SIGKILL) after it. Call it at the top of the file, after
 * the file's own `afterEach`, so the processes are gone before that runs.
 */
export function useCli(): Cli {
  afterEach(() => {
    for (const child of started.splice(0))
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  const built = (): string => inject('cliPath')
  const run = (args: readonly string[], env: NodeJS.ProcessEnv = {}): TrackletProcess =>
    startTracklet(built(), args, env, { inherit: true })
  return {
    get path() {
      return built()
    },
    run,
    async startRelay(args, env = {}) {
      const running = run(['relay', ...args], env)
      return { ...running, url: await listeningUrl(running) }
    },
  }
}
