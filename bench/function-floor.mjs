// The floor of a function's call (docs/functions.md, "How it is sandboxed"): what QuickJS itself
// spends per event, in this thread (no worker, no relay), on the event bench/function-calls.mjs
// uses: its JSON.parse, its JSON.stringify, and a whole batch of calls through the prelude's one
// crossing (BATCH events; the trivial onTrack, and a type with no handler). CPU per event, µs:
//   node bench/function-floor.mjs
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { mkdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { build } from 'esbuild'
import { functionEvent } from './events.mjs'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const BATCH = Number(process.env.BATCH ?? 64)
const ROUNDS = Number(process.env.ROUNDS ?? 600)
const TRIVIAL = 'function onTrack(event) { event.properties.enriched = true; return event }'

mkdirSync(join(ROOT, '.tmp'), { recursive: true })
const outfile = join(ROOT, '.tmp', 'function-prelude.mjs')
await build({
  entryPoints: [join(ROOT, 'src/relay/features/functions/prelude.ts')],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  logLevel: 'silent',
})
const { PRELUDE } = await import(pathToFileURL(outfile).href)
const require = createRequire(join(ROOT, 'package.json'))
const core = require('quickjs-emscripten-core')
const variant = require('@jitl/quickjs-wasmfile-release-sync')
const module = await core.newQuickJSWASMModuleFromVariant(variant.default ?? variant)

const eventsJson = JSON.stringify(Array.from({ length: BATCH }, (_, i) => functionEvent(i)))

// One sandbox per figure, as the worker makes it (the prelude, then the code); `script` gets the
// events' JSON and returns a string, ROUNDS times (no script: the prelude's batch entry); a first
// pass of ROUNDS warms it.
function perEvent(code, script) {
  const context = module.newRuntime().newContext()
  const entries = context.evalCode(PRELUDE, 'prelude.js').value
  context.evalCode(code, 'code.js').value.dispose()
  const fn = script === undefined ? context.getProp(entries, 'batch') : context.evalCode(script, 'bench.js').value
  const args = [context.newString(eventsJson), context.newString('{}'), context.newObject()]
  let us = 0
  for (let pass = 0; pass < 2; pass++) {
    const cpu = process.cpuUsage()
    for (let round = 0; round < ROUNDS; round++)
      context
        .callFunction(fn, context.undefined, ...args)
        .unwrap()
        .dispose()
    const used = process.cpuUsage(cpu)
    us = (used.user + used.system) / ROUNDS / BATCH
  }
  return us
}

const figures = {
  'JSON.parse of an event': perEvent('', '(json) => { JSON.parse(json); return "" }'),
  'JSON.stringify of an event': perEvent(
    '',
    '(json) => { const e = JSON.parse(json); for (const x of e) JSON.stringify(x); return "" }',
  ),
  'a call of the trivial onTrack, in a batch': perEvent(TRIVIAL),
  'a call of a type with no handler, in a batch': perEvent(''),
}
// The stringify figure ran a parse too: its own share is the difference.
figures['JSON.stringify of an event'] -= figures['JSON.parse of an event']
for (const [what, us] of Object.entries(figures)) console.log(`${us.toFixed(1).padStart(6)} µs CPU  ${what}`)
