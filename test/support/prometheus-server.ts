import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { waitFor } from './wait-for'

/** Where Debian's `prometheus` package puts the server; `PROMETHEUS_PATH` names another. */
export const PROMETHEUS_PATH = process.env['PROMETHEUS_PATH'] ?? '/usr/bin/prometheus'

/** Whether the Prometheus tests run: when the server is there, and always in CI (where its absence fails them). */
export const runPrometheusTests = existsSync(PROMETHEUS_PATH) || process.env['CI'] === 'true'

/** Why they were skipped, for the suite's title. */
export const PROMETHEUS_SKIP_REASON = `skipped: no Prometheus at ${PROMETHEUS_PATH} (apt-get install prometheus, or set PROMETHEUS_PATH; in CI=true they run and fail)`

/** A scrape job of the server's config. */
export interface ScrapeJob {
  job: string
  /** `host:port` */
  target: string
  bearerToken: string
}

/** A real Prometheus server on a free loopback port, with its own throwaway storage. */
export interface PrometheusServer {
  url: string
  /** `GET /api/v1/<path>`'s `data`; throws on an error answer. */
  api<T>(path: string): Promise<T>
  stop(): Promise<void>
}

/**
 * Starts Prometheus scraping `jobs` every second and evaluating `ruleFiles` every second, and
 * waits until it answers ready.
 */
export async function startPrometheus(options: { jobs: ScrapeJob[]; ruleFiles: string[] }): Promise<PrometheusServer> {
  if (!existsSync(PROMETHEUS_PATH)) {
    throw new Error(
      `Prometheus is not installed at ${PROMETHEUS_PATH}: apt-get install -y prometheus, or set PROMETHEUS_PATH`,
    )
  }
  const dir = mkdtempSync(join(tmpdir(), 'tracklet-prometheus-'))
  const config = [
    'global: { scrape_interval: 1s, evaluation_interval: 1s }',
    `rule_files: ${JSON.stringify(options.ruleFiles)}`,
    'scrape_configs:',
    ...options.jobs.flatMap((job) => [
      `  - job_name: ${JSON.stringify(job.job)}`,
      `    authorization: { credentials: ${JSON.stringify(job.bearerToken)} }`,
      `    static_configs: [{ targets: [${JSON.stringify(job.target)}] }]`,
    ]),
  ].join('\n')
  writeFileSync(join(dir, 'prometheus.yml'), config)
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  let output = ''
  const child: ChildProcess = spawn(
    PROMETHEUS_PATH,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-4000)
  }
  child.stdout?.on('data', keep)
  child.stderr?.on('data', keep)
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM')
    await exited
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    await waitFor(async () => {
      if (child.exitCode !== null) throw new Error(`prometheus exited (${child.exitCode}):\n${output}`)
      try {
        return (await fetch(`${url}/-/ready`)).ok ? true : undefined
      } catch {
        return undefined
      }
    }, 'Prometheus to be ready')
  } catch (error) {
    await stop()
    throw error
  }
  return {
    url,
    async api<T>(path: string): Promise<T> {
      const answer = (await (await fetch(`${url}/api/v1/${path}`)).json()) as {
        status: string
        data: T
        error?: string
      }
      if (answer.status !== 'success') throw new Error(`Prometheus: ${path}: ${answer.error}`)
      return answer.data
    },
    stop,
  }
}

// A port free now (Prometheus takes no port 0).
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}
