// CI step: the packed tarball installed the way an SDK-only user installs it, into an empty
// project, without the optional peers (better-sqlite3, pg). Checks that nothing native was
// installed or compiled, that the SDK works there from require() and import(), and that the
// relay names the package to install instead of failing obscurely.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../..', import.meta.url))
const work = mkdtempSync(join(tmpdir(), 'tracklet-consumer-'))
const npm = (args, cwd) => execFileSync('npm', [...args, '--no-audit', '--no-fund'], { cwd, encoding: 'utf8' })

try {
  const tarball = npm(['pack', '--silent', '--pack-destination', work], root).trim().split('\n').at(-1)
  const project = join(work, 'app')
  mkdirSync(project)
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'app', private: true }))
  const started = Date.now()
  npm(['install', join(work, tarball)], project)
  console.log(`installed ${tarball} in ${((Date.now() - started) / 1000).toFixed(1)} s`)

  const modules = join(project, 'node_modules')
  for (const peer of ['better-sqlite3', 'pg']) {
    if (existsSync(join(modules, peer))) throw new Error(`${peer} was installed, but it is an optional peer`)
  }
  const native = readdirSync(modules, { recursive: true }).filter((p) => String(p).endsWith('.node'))
  if (native.length > 0) throw new Error(`native addons were installed: ${native.join(', ')}`)

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
  for (const file of ['use.cjs', 'use.mjs']) {
    process.stdout.write(execFileSync(process.execPath, [file], { cwd: project, encoding: 'utf8' }))
  }
  console.log('SDK-only install: ok (no native addon, the SDK works, the relay names its driver)')
} finally {
  rmSync(work, { recursive: true, force: true })
}
