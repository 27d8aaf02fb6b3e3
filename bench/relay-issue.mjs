// node bench/relay-issue.mjs (after npm run build) — every figure of the relay's performance aims
// in one run: bench/relay.mjs on PostgreSQL (with its graphile-worker peer and per-statement
// profile) and on SQLite, bench/plans.mjs (a tracking plan, one message in ten violating) and
// bench/functions.mjs (a trivial onTrack), bench/archive.mjs and bench/warehouse.mjs, each in its
// own process, their output shown as it comes; then one table of the figures against their aims.
// Figures compare on one machine; never asserted.
//   BENCH_MESSAGES=30000 (the default here) and BENCH_IDS=random (the SDK's UUID ids, the default
//   here) reach bench/relay.mjs; BENCH_ROUNDS reaches bench/plans.mjs;
//   SKIP=relay,functions,plans,archive,warehouse skips those.
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const here = import.meta.dirname
const dir = mkdtempSync(join(tmpdir(), 'tracklet-bench-issue-'))
const skip = new Set((process.env.SKIP ?? '').split(',').filter(Boolean))

// Runs `node script args`, its output shown and kept; answers the output and its JSON figures.
function run(script, args, env) {
  const json = join(dir, `${script}-${args.join('-') || 'run'}.json`)
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(here, script), ...args], {
      env: { ...process.env, BENCH_JSON: json, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let out = ''
    child.stdout.on('data', (chunk) => {
      out += chunk
      process.stdout.write(chunk)
    })
    child.on('error', reject)
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`${script} ${args.join(' ')} exited with ${code}`))
      let figures
      try {
        figures = JSON.parse(readFileSync(json, 'utf8'))
      } catch {}
      resolve({ out, figures })
    })
  })
}

const relayEnv = {
  BENCH_MESSAGES: process.env.BENCH_MESSAGES ?? '30000',
  BENCH_IDS: process.env.BENCH_IDS ?? 'random',
}
const rows = []
const row = (figure, value, aim) => rows.push([figure, value, aim])
const x = (n) => (n === undefined ? 'n/a' : `${n.toFixed(2)}×`)
try {
  if (!skip.has('relay')) {
    console.log('== bench/relay.mjs --store postgres --relays 1')
    const pg = (await run('relay.mjs', ['--store', 'postgres', '--relays', '1'], relayEnv)).figures
    console.log('== bench/relay.mjs --store sqlite')
    const lite = (await run('relay.mjs', ['--store', 'sqlite'], relayEnv)).figures
    const peer = pg?.peer
    row('ingest ÷ graphile-worker', x(peer?.ingest), '≥ 1.2×')
    row('delivery ÷ graphile-worker', x(peer?.delivery), '≥ 1.3×')
    row('PostgreSQL CPU per message ÷ graphile-worker', x(peer?.serverCpu), '≤ 0.6×')
    row(
      'WAL per message (graphile-worker’s)',
      peer ? `${Math.round(peer.walBytes)} B (${Math.round(peer.peerWalBytes)} B)` : 'n/a',
      '≤ 1,200 B',
    )
    row('ingest only ÷ raw inserts, SQLite', x(lite?.ingestOnlyVsInserts), '≥ 0.5×')
    row('ingest only ÷ raw inserts, PostgreSQL', x(pg?.ingestOnlyVsInserts), '≥ 0.5×')
    row('both paths ÷ raw sender CPU, SQLite', x(lite?.bothPathsVsRawSenderCpu), '≤ 1.0×')
    row('both paths ÷ raw sender CPU, PostgreSQL', x(pg?.bothPathsVsRawSenderCpu), '≤ 1.0×')
  }
  if (!skip.has('plans')) {
    console.log('== bench/plans.mjs')
    const plans = (await run('plans.mjs', [], {})).figures
    row('plans with violations (ingest ÷ without a plan)', x(plans?.ratio), '≥ 0.85×')
    row('plans with violations, CPU per message', x(plans?.cpuRatio), '')
  }
  if (!skip.has('functions')) {
    console.log('== bench/functions.mjs')
    const { out } = await run('functions.mjs', [], { NO_LOOP: '1' })
    const found = /median: throughput ratio ([\d.]+)×, function cost ([\d.-]+) µs/.exec(out)
    row('delivery with a trivial function ÷ without', found ? `${found[1]}×` : 'n/a', '≥ 0.75×')
    row('function CPU per delivery', found ? `${found[2]} µs` : 'n/a', '≤ 30 µs')
  }
  // The destinations beside the outbox (issue 43 item 6): what archiving adds to ingest, a replay's
  // read-back rate, and the warehouse loader against a raw COPY of the same rows.
  if (!skip.has('archive')) {
    console.log('== bench/archive.mjs')
    const archive = (await run('archive.mjs', [], {})).figures
    const pct = (n) => (n === undefined ? 'n/a' : `${n.toFixed(1)} %`)
    const rate = (n) => (n === undefined ? 'n/a' : `${Math.round(n).toLocaleString('en-US')}`)
    row(
      'archive CPU ÷ ingest CPU, ndjson.gz / parquet',
      `${pct(archive?.ndjsonPercent)} / ${pct(archive?.parquetPercent)}`,
      '≤ 10 %',
    )
    row(
      'replay from the archive, msgs/s, ndjson.gz / parquet',
      `${rate(archive?.ndjsonRead)} / ${rate(archive?.parquetRead)}`,
      '≥ 5,000',
    )
  }
  if (!skip.has('warehouse')) {
    console.log('== bench/warehouse.mjs')
    const [loader, raw] = (await run('warehouse.mjs', ['--rounds', '1'], {})).figures?.table ?? []
    row('warehouse load ÷ raw COPY (rows/s)', loader ? x(loader['rows/s'] / raw['rows/s']) : 'n/a', '≥ 0.5×')
    row(
      'warehouse loader CPU per row, client / server',
      loader ? `${loader['client CPU µs/row']} / ${loader['server CPU µs/row']} µs` : 'n/a',
      '',
    )
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
console.log('\nthe issue’s figures, this run:')
const width = Math.max(...rows.map((r) => r[0].length))
for (const [figure, value, aim] of rows) console.log(`  ${figure.padEnd(width)}  ${value.padStart(18)}  ${aim}`)
