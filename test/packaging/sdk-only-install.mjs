// CI step: the packed tarball installed the way an SDK-only user installs it, into an empty
// project, without the optional peers (the database drivers, and what only a relay uses:
// src/relay/peers.ts). Checks that the install stays small (SDK_INSTALL_LIMIT) with nothing native
// installed or compiled, that the SDK works there from require() and import(), and that the relay
// names the packages to install instead of failing obscurely.
//
// `npm pack --ignore-scripts` packs the dist/ already built (by `npm ci` in CI): set
// TRACKLET_PACK_BUILD=1 to build it first.
import { execFileSync } from 'node:child_process'
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../..', import.meta.url))
/** The most an SDK-only install may take on disk, as `du` counts it (issue 40: 12 MB). */
const SDK_INSTALL_LIMIT = 12 * 1024 * 1024
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const PEERS = Object.keys(pkg.peerDependencies ?? {})
const work = mkdtempSync(join(tmpdir(), 'tracklet-consumer-'))
const npm = (args, cwd) => execFileSync('npm', [...args, '--no-audit', '--no-fund'], { cwd, encoding: 'utf8' })

try {
  const build = process.env['TRACKLET_PACK_BUILD'] === '1' ? [] : ['--ignore-scripts']
  if (build.length > 0 && !existsSync(join(root, 'dist', 'index.js'))) {
    throw new Error('no dist/ to pack: run `npm run build`')
  }
  const tarball = npm(['pack', '--silent', ...build, '--pack-destination', work], root)
    .trim()
    .split('\n')
    .at(-1)
  const project = join(work, 'app')
  mkdirSync(project)
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'app', private: true }))
  const started = Date.now()
  npm(['install', join(work, tarball)], project)
  console.log(`installed ${tarball} in ${((Date.now() - started) / 1000).toFixed(1)} s`)

  const modules = join(project, 'node_modules')
  for (const peer of PEERS) {
    if (existsSync(join(modules, peer))) throw new Error(`${peer} was installed, but it is an optional peer`)
  }
  const native = readdirSync(modules, { recursive: true }).filter((p) => String(p).endsWith('.node'))
  if (native.length > 0) throw new Error(`native addons were installed: ${native.join(', ')}`)
  const { bytes, packages } = measure(modules)
  const mib = (n) => `${(n / 1024 / 1024).toFixed(1)} MiB`
  console.log(`SDK-only install: ${mib(bytes)} on disk, ${packages.length} packages`)
  console.log(`  ${packages.join(', ')}`)
  if (bytes > SDK_INSTALL_LIMIT) {
    throw new Error(`the SDK-only install takes ${mib(bytes)}, over ${mib(SDK_INSTALL_LIMIT)} (src/relay/peers.ts)`)
  }

  const check = `
    const assert = require('node:assert/strict')
    const http = require('node:http')
    module.exports = async function check({ Analytics }, relay, how) {
      const bodies = []
      const server = http.createServer((req, res) => {
        let body = ''
        req.on('data', (c) => (body += c))
        req.on('end', () => { bodies.push(JSON.parse(body)); res.end('{}') })
      })
      await new Promise((r) => server.listen(0, '127.0.0.1', r))
      const analytics = new Analytics('k', { endpoint: 'http://127.0.0.1:' + server.address().port, flushAt: 1 })
      analytics.track({ userId: 'u', event: 'Installed' })
      await analytics.closeAndFlush()
      server.close()
      assert.equal(bodies[0].batch[0].event, 'Installed', how + ': the SDK sent its batch')
      const unmetered = await relay.createRelay({ database: ':memory:', sources: [] }).then(
        () => assert.fail('the relay started without prom-client'),
        (e) => e,
      )
      assert.equal(unmetered.code, 'ERR_RELAY_PACKAGE_MISSING', how + ': ' + unmetered.message)
      assert.match(unmetered.message, /npm install prom-client/)
      console.log(how + ': ' + unmetered.message)
    }
    module.exports.drivers = async function drivers(relay, how) {
      for (const [database, driver] of [[':memory:', 'better-sqlite3'], ['postgres://u:p@127.0.0.1:1/db', 'pg']]) {
        const error = await relay.createRelay({ database, sources: [{ name: 'w', writeKey: 'k' }] }).then(
          () => assert.fail('the relay started without its driver'),
          (e) => e,
        )
        assert.equal(error.code, 'ERR_RELAY_DRIVER_MISSING', how + ': ' + error.message)
        assert.match(error.message, new RegExp('npm install ' + driver))
        console.log(how + ': ' + error.message)
      }
    }`
  writeFileSync(join(project, 'check.cjs'), check)
  writeFileSync(
    join(project, 'use.cjs'),
    `require('./check.cjs')(require('tracklet'), require('tracklet/relay'), 'require()').catch((e) => { console.error(e); process.exit(1) })`,
  )
  writeFileSync(
    join(project, 'use.mjs'),
    `import check from './check.cjs'\nawait check(await import('tracklet'), await import('tracklet/relay'), 'import()')`,
  )
  const both = () => {
    for (const file of ['use.cjs', 'use.mjs']) {
      const options = { cwd: project, encoding: 'utf8' }
      process.stdout.write(execFileSync(process.execPath, [file], options))
    }
  }
  both()
  // With the one package every relay needs (pure JavaScript), the relay names its store's driver.
  npm(['install', 'prom-client'], project)
  writeFileSync(
    join(project, 'use.cjs'),
    `require('./check.cjs').drivers(require('tracklet/relay'), 'require()')
      .catch((e) => { console.error(e); process.exit(1) })`,
  )
  writeFileSync(
    join(project, 'use.mjs'),
    "import check from './check.cjs'\nawait check.drivers(await import('tracklet/relay'), 'import()')",
  )
  both()
  console.log('SDK-only install: ok (small, nothing native, the SDK works, the relay says what to add)')
} finally {
  rmSync(work, { recursive: true, force: true })
}

/** What `du` counts under `dir` (blocks allocated), and the packages installed there. */
function measure(dir) {
  let bytes = 0
  const packages = []
  for (const entry of readdirSync(dir, { recursive: true })) {
    const path = join(dir, String(entry))
    const stat = lstatSync(path)
    bytes += stat.blocks * 512
    const parts = String(entry).split('/')
    const name = parts[0]?.startsWith('@') ? parts.slice(0, 2) : parts.slice(0, 1)
    const nested = parts.lastIndexOf('node_modules')
    if (parts.at(-1) === 'package.json' && parts.length === name.length + 1 && nested === -1)
      packages.push(name.join('/'))
  }
  return { bytes, packages: packages.filter((name) => !name.startsWith('.')).sort() }
}
