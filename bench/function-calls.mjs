// A function's own cost per call (docs/functions.md), apart from delivery: a trivial onTrack called
// on CALLS events in waves of WAVE (as the delivery worker calls it: the calls of a wave wait
// together and go to the sandbox as one batch), the process's CPU (every thread: the sandbox's
// worker included) per call. Bundles the sandbox from the sources of ROOT (default: this checkout),
// so two checkouts compare pair by pair:
//   farm-bench --vs 'node bench/function-calls.mjs /path/to/other/checkout' -- node bench/function-calls.mjs
// Prints `µs CPU per call` and `calls per second`.
import { mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { build } from 'esbuild'
import { functionEvent } from './events.mjs'

const ROOT = resolve(process.argv[2] ?? fileURLToPath(new URL('..', import.meta.url)))
const CALLS = Number(process.env.CALLS ?? 20000)
const WAVE = Number(process.env.WAVE ?? 64)
const TRIVIAL = 'function onTrack(event) { event.properties.enriched = true; return event }'

// Where the bundle goes decides where QuickJS is resolved from: inside the checkout.
const outdir = join(ROOT, '.tmp')
mkdirSync(outdir, { recursive: true })
const candidates = ['src/relay/features/functions/sandbox.ts', 'src/relay/delivery/functions/sandbox.ts']
let entry
for (const candidate of candidates) {
  try {
    await build({
      entryPoints: [join(ROOT, candidate)],
      outfile: join(outdir, 'function-sandbox.mjs'),
      bundle: true,
      platform: 'node',
      format: 'esm',
      packages: 'external',
      logLevel: 'silent',
    })
    entry = join(outdir, 'function-sandbox.mjs')
    break
  } catch {}
}
if (entry === undefined) throw new Error(`no sandbox.ts under ${ROOT}`)
const { FunctionSandbox } = await import(pathToFileURL(entry).href)

async function calls(sandbox, count) {
  for (let done = 0; done < count; done += WAVE) {
    const wave = []
    for (let i = done; i < Math.min(count, done + WAVE); i++) wave.push(sandbox.call(functionEvent(i)))
    for (const result of await Promise.all(wave)) {
      if (result.kind !== 'event') throw new Error(`a call ended ${result.kind}: ${result.message}`)
    }
  }
}

const sandbox = await FunctionSandbox.start({ code: TRIVIAL, filename: 'bench.js', timeoutMs: 30_000 })
await calls(sandbox, 2000) // warm-up: the code paths compiled on both threads
const cpu = process.cpuUsage()
const started = performance.now()
await calls(sandbox, CALLS)
const ms = performance.now() - started
const used = process.cpuUsage(cpu)
await sandbox.close()
console.log(
  `${((used.user + used.system) / CALLS).toFixed(1)} µs CPU per call, ${((CALLS / ms) * 1000).toFixed(0)} calls per second (waves of ${WAVE})`,
)
