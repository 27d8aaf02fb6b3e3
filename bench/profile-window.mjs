// Where a relay's thread spends each message while it ingests: reads a V8 CPU profile (from
// `node bench/ingest-only.mjs --profile <dir>`, or BENCH_PROFILE with bench:relay), keeps the
// samples between the first and the last one in readJsonBody (the ingest window, start-up and
// shutdown left out), and prints µs per message by part of the work (each sample charged to the
// outermost part on its stack) and the functions with the most self time.
//   node bench/profile-window.mjs <file.cpuprofile> <messages ingested>
import { readFileSync } from 'node:fs'

const [file, messages] = process.argv.slice(2)
const N = Number(messages)
if (!file || !(N > 0)) throw new Error('usage: node bench/profile-window.mjs <file.cpuprofile> <messages>')
const profile = JSON.parse(readFileSync(file, 'utf8'))
const byId = new Map(profile.nodes.map((node) => [node.id, node]))
const parentOf = new Map()
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id)

// The parts, outermost first: a sample counts for the first whose pattern its stack matches.
const PARTS = [
  ['store: the enqueue transaction (inserts, commit, fsync wait)', /sqliteTransaction/],
  ['reading and parsing the body', /readJsonBody|jsonDepth|stringEnd/],
  ['validation', /findUnstorable|findMessageProblem|findWireMessageProblem|hasNonFinite|isIsoTimestamp/],
  ['serialising the message', /^serialize /],
  ['HTTP', /_http_|parserOn|writev|onSocket|node:net/],
]

function partOf(id) {
  const { functionName } = byId.get(id).callFrame
  if (functionName === '(idle)') return 'idle'
  if (functionName === '(garbage collector)') return 'garbage collector'
  const frames = []
  for (let at = id; at !== undefined; at = parentOf.get(at)) {
    const frame = byId.get(at).callFrame
    frames.push(`${frame.functionName} ${frame.url}`)
  }
  return PARTS.find(([, pattern]) => frames.some((f) => pattern.test(f)))?.[0] ?? 'other'
}

const inWindow = profile.samples.flatMap((id, i) => (byId.get(id).callFrame.functionName === 'readJsonBody' ? [i] : []))
if (inWindow.length === 0) throw new Error('no sample in readJsonBody: was this relay ingesting?')
const parts = new Map()
const self = new Map()
let total = 0
for (let i = inWindow[0]; i <= inWindow.at(-1); i++) {
  const id = profile.samples[i]
  const us = profile.timeDeltas[i + 1] ?? 0 // timeDeltas[i + 1]: the time until the next sample
  total += us
  const { functionName, url, lineNumber } = byId.get(id).callFrame
  const name = `${functionName || '(anonymous)'} ${url.split('/').slice(-2).join('/')}:${lineNumber + 1}`
  self.set(name, (self.get(name) ?? 0) + us)
  const part = partOf(id)
  parts.set(part, (parts.get(part) ?? 0) + us)
}
const perMessage = (us) => `${(us / N).toFixed(2).padStart(6)} µs`
console.log(`ingest window ${(total / 1e3).toFixed(0)} ms for ${N} messages: ${perMessage(total)} per message`)
for (const [part, us] of [...parts].sort((a, b) => b[1] - a[1])) console.log(`  ${perMessage(us)}  ${part}`)
console.log('  self time, most first:')
for (const [name, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`  ${perMessage(us)}  ${name}`)
