import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { build } from 'esbuild'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EXIT_PATH, type RuntimeRequest, startRuntimeReceiver } from './runtime-receiver'
import { RUNTIMES_DIR, runtimePackage } from './runtime-package'
import { waitFor } from '../support/wait-for'

// The SDK inside each runtime it supports, through the build the package's `exports` pick there.
// `.ci/run` installs the runtimes (npm packages shipping their binaries) under .tmp/runtimes; a
// developer without them sees these tests skipped, saying why. In CI a missing one fails.
const BIN = join(RUNTIMES_DIR, '.bin')
const have = (name: string): boolean => existsSync(join(BIN, name)) || existsSync(join(RUNTIMES_DIR, name))
const CI = process.env['CI'] === 'true'

let pkg: Awaited<ReturnType<typeof runtimePackage>>
let receiver: Awaited<ReturnType<typeof startRuntimeReceiver>>

beforeAll(async () => {
  pkg = await runtimePackage()
}, 60_000)

afterAll(async () => {
  await pkg?.remove()
})

describe('the fetch build', () => {
  it('imports no module at all: no node: built-in, no undici (everything it needs is bundled)', async () => {
    const code = await readFile(join(pkg.dir, 'node_modules', 'tracklet', 'dist', 'web', 'index.js'), 'utf8')
    // Statements at the top level start their line; the doc comments bundled in are indented.
    expect(code).not.toMatch(/^(import|export)\b[^\n]*\bfrom\s*["']|\bimport\s*\(\s*["']|\brequire\s*\(\s*["']/m)
    expect(code).not.toMatch(/["']node:|["']undici["']/)
  })
})

interface ProbeResult {
  outcomes: string[]
  errors: string[]
  stats: Record<string, number>
  dispatcherRefused: boolean
  canGzip: boolean
  gzipRefused: boolean
  paused: string
}

/** What every runtime must show: the same rules as on Node (gzip, Retry-After, a 413 split). */
function expectSameRules(result: ProbeResult, requests: RuntimeRequest[], runtime: RegExp, gzip = true): void {
  expect(result.canGzip).toBe(gzip)
  expect(result.gzipRefused).toBe(!gzip)
  expect(result.outcomes).toEqual(['delivered', 'delivered', 'delivered', 'delivered'])
  expect(result.errors).toEqual([])
  expect(result.dispatcherRefused).toBe(true)
  // 429 (Retry-After honoured), 413 (split), then the two halves.
  expect(requests.map((request) => [request.status, request.events])).toEqual([
    [429, ['a', 'b', 'c', 'd']],
    [413, ['a', 'b', 'c', 'd']],
    [200, ['a', 'b']],
    [200, ['c', 'd']],
  ])
  for (const request of requests) {
    expect(request.encoding).toBe(gzip ? 'gzip' : undefined)
    expect(request.texts.every((text) => text === 'ünïcødé ✓')).toBe(true)
    expect(request.userAgent).toMatch(runtime)
  }
  expect(result.stats).toMatchObject({ delivered: 4, failed: 0, requests: 4, retries: 1 })
  // Retry-After: 30 held the second client's message past its 1.5 s closing deadline: no retry.
  expect(result.paused).toBe('ERR_CLOSED')
  expect(receiver.pauseRequests()).toBe(1)
}

function run(command: string, args: string[], cwd: string): Promise<{ stdout: string; stderr: string; code: number }> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, timeout: 60_000, env: { ...process.env, NO_COLOR: '1' } }, (error, stdout, stderr) =>
      resolve({ stdout, stderr, code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1 }),
    )
  })
}

/** Queues one message and ends without flush() or closeAndFlush(): beforeExit must send it. */
const UNCLOSED = (endpoint: string): string => `import { Analytics } from 'tracklet'
const analytics = new Analytics('runtime-key', { endpoint: ${JSON.stringify(endpoint)}, path: ${JSON.stringify(EXIT_PATH)} })
analytics.track({ userId: 'u', event: 'never closed' })`

const MAIN = `import { probe } from './probe.mjs'
console.log(JSON.stringify(await probe(process.argv[2] ?? Deno.args[0])))`

/** The runtimes this run skips, for the one warning at the end of the file. */
const skipped: string[] = []

function suite(name: string, binary: string, body: () => void): void {
  const present = have(binary)
  if (!present) skipped.push(name)
  if (!present && CI) {
    it(`${name} is installed (.ci/run installs it under .tmp/runtimes)`, () => {
      expect.fail(`${binary} is missing from ${RUNTIMES_DIR}`)
    })
    return
  }
  describe.skipIf(!present)(
    `${name}${present ? '' : ' (skipped: not installed; .ci/run installs it under .tmp/runtimes)'}`,
    () => {
      beforeAll(async () => {
        receiver = await startRuntimeReceiver()
      })
      afterAll(async () => {
        await receiver?.close()
      })
      body()
    },
  )
}

suite('Bun', 'bun', () => {
  it('sends through the fetch build, with the same rules', async () => {
    await writeFile(join(pkg.dir, 'main-bun.mjs'), MAIN.replace(' ?? Deno.args[0]', ''))
    const { stdout, stderr, code } = await run(join(BIN, 'bun'), ['main-bun.mjs', receiver.url], pkg.dir)
    expect(stderr).toBe('')
    expect(code).toBe(0)
    expectSameRules(JSON.parse(stdout), receiver.requests, /^tracklet\/[\d.]+ \(bun \d/)
  })

  it('sends what a program queued and never flushed, as the process is about to exit (beforeExit)', async () => {
    await writeFile(join(pkg.dir, 'unclosed-bun.mjs'), UNCLOSED(receiver.url))
    const { stderr, code } = await run(join(BIN, 'bun'), ['unclosed-bun.mjs'], pkg.dir)
    expect([stderr, code]).toEqual(['', 0])
    expect(receiver.exitBatches).toEqual([['never closed']])
  })
})

suite('Deno', 'deno', () => {
  it('sends through the fetch build, with the same rules', async () => {
    await writeFile(join(pkg.dir, 'main-deno.mjs'), MAIN.replace('process.argv[2] ?? ', ''))
    const { stdout, stderr, code } = await run(
      join(BIN, 'deno'),
      [
        'run',
        '--quiet',
        '--no-config',
        '--no-prompt',
        '--node-modules-dir=manual',
        // The network to the receiver and nothing else: importing the package needs no permission
        // (no --allow-env: the fetch build reads DEBUG only where that is granted).
        `--allow-net=${new URL(receiver.url).host}`,
        'main-deno.mjs',
        receiver.url,
      ],
      pkg.dir,
    )
    expect(stderr).toBe('')
    expect(code).toBe(0)
    expectSameRules(JSON.parse(stdout), receiver.requests, /^tracklet\/[\d.]+ \(deno \d/)
  })

  it('sends what a program queued and never flushed, as the process is about to exit (beforeExit)', async () => {
    await writeFile(join(pkg.dir, 'unclosed-deno.mjs'), UNCLOSED(receiver.url))
    const args = ['run', '--quiet', '--no-config', '--no-prompt', '--node-modules-dir=manual']
    const host = new URL(receiver.url).host
    const { stderr, code } = await run(
      join(BIN, 'deno'),
      [...args, `--allow-net=${host}`, 'unclosed-deno.mjs'],
      pkg.dir,
    )
    expect([stderr, code]).toEqual(['', 0])
    expect(receiver.exitBatches).toEqual([['never closed']])
  })
})

suite('Vercel Edge (edge-runtime)', 'edge-runtime', () => {
  it('sends through the fetch build picked by the edge-light condition, with the same rules', async () => {
    const bundle = await build({
      stdin: { contents: "import { probe } from './probe.mjs'; globalThis.probe = probe", resolveDir: pkg.dir },
      bundle: true,
      write: false,
      format: 'iife',
      platform: 'neutral',
      conditions: ['edge-light'],
      mainFields: ['module', 'main'],
    })
    const { EdgeRuntime } = await import(join(RUNTIMES_DIR, 'edge-runtime', 'dist', 'index.js'))
    const runtime = new EdgeRuntime({ initialCode: bundle.outputFiles[0]!.text })
    const result = await runtime.evaluate(`globalThis.probe(${JSON.stringify(receiver.url)})`)
    // edge-runtime has no CompressionStream: gzip is refused there, and the rest holds.
    expectSameRules(result, receiver.requests, /^tracklet\/[\d.]+ \(edge-light\)/, false)
  })
})

suite('Cloudflare Workers (workerd)', 'workerd', () => {
  it('sends through the fetch build picked by the workerd condition, handing each batch to ctx.waitUntil', async () => {
    const bundle = await build({
      stdin: {
        contents: `import { probe } from './probe.mjs'
export default { async fetch(request, env, ctx) {
  const handed = []
  const result = await probe(env.ENDPOINT, (promise) => { handed.push(promise); ctx.waitUntil(promise) })
  return Response.json({ ...result, handed: handed.length })
} }`,
        resolveDir: pkg.dir,
      },
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'neutral',
      conditions: ['workerd', 'worker', 'browser'],
      mainFields: ['module', 'main'],
    })
    await writeFile(join(pkg.dir, 'worker.js'), bundle.outputFiles[0]!.text)
    const port = await freePort()
    await writeFile(
      join(pkg.dir, 'workerd.capnp'),
      `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    (name = "internet", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);
const worker :Workerd.Worker = (
  modules = [(name = "worker", esModule = embed "worker.js")],
  compatibilityDate = "2024-09-23",
  bindings = [(name = "ENDPOINT", text = "${receiver.url}")],
);
`,
    )
    const server = execFile(join(BIN, 'workerd'), ['serve', 'workerd.capnp'], { cwd: pkg.dir })
    try {
      const answer = await waitFor(
        () =>
          fetch(`http://127.0.0.1:${port}/`).then(
            (response) => response.json() as Promise<ProbeResult & { handed: number }>,
            () => undefined,
          ),
        'workerd to answer',
        30_000,
      )
      expectSameRules(answer, receiver.requests, /^tracklet\/[\d.]+ \(workerd\)/)
      // One batch was started (then retried and split within it): one promise for ctx.waitUntil.
      expect(answer.handed).toBe(1)
    } finally {
      server.kill()
    }
  }, 60_000)
})

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer()
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })
}

// Skipped tests show only as a count in the summary: say which runtimes went untested, and why.
if (skipped.length > 0 && !CI) {
  console.warn(
    `SKIPPED: the SDK was not tested on ${skipped.join(', ')}: not installed under ${RUNTIMES_DIR} ` +
      '(.ci/run installs them, in its step "download the SDK\'s other runtimes").',
  )
}
