// Summarises V8 CPU profiles written by `node bench/sdk.mjs --profile`:
//   node bench/profile-summary.mjs .tmp/profiles/<file>.cpuprofile [--top=25]
// Prints self time per function and per source file, to see where a variant's CPU goes.
import { readFileSync } from 'node:fs'
import { relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const { values, positionals } = parseArgs({
  options: { top: { type: 'string', default: '25' } },
  allowPositionals: true,
})
const TOP = Number(values.top)
const ROOT = fileURLToPath(new URL('..', import.meta.url))

for (const file of positionals) {
  const profile = JSON.parse(readFileSync(file, 'utf8'))
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const selfUs = new Map()
  // timeDeltas[i] is the time before sample i: charge it to the sampled node.
  profile.samples.forEach((id, i) => {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0))
  })
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0)

  const byFunction = new Map()
  const byFile = new Map()
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byId.get(id).callFrame
    const where = url === '' ? '' : relative(ROOT, url.replace(/^file:\/\//, ''))
    add(byFunction, `${functionName || '(anonymous)'} ${where}${where ? `:${lineNumber + 1}` : ''}`, us)
    add(byFile, where || '(native / vm)', us)
  }
  console.log(`\n${relative(ROOT, file)}: ${(total / 1e6).toFixed(2)} s sampled`)
  print('self time by function', byFunction, total)
  print('self time by file', byFile, total)
}

function add(map, key, us) {
  map.set(key, (map.get(key) ?? 0) + us)
}

function print(title, map, total) {
  console.log(`  ${title}:`)
  for (const [key, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, TOP)) {
    console.log(`  ${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1e3).toFixed(0).padStart(6)} ms  ${key}`)
  }
}
