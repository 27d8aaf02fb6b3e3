// CI step: the package builds itself wherever it is installed from source, not only from the
// registry. Two checks, both from a clone of HEAD that has never been built (no dist/):
//
// 1. `npm pack` in that clone ships dist/ (npm runs `prepare` before packing).
// 2. `npm install git+file://…#<HEAD>` into an empty project installs a package whose dist/ is
//    there and works with require(), import() and its bin. npm builds a git dependency by
//    installing its dependencies in a temporary clone and running its `prepare` script — and
//    only that one: `prepack` is not run for git dependencies (pacote's DirFetcher: "we *only*
//    run prepare"), so a package that builds in `prepack` installs from git without dist/.
//
// Commits only: uncommitted changes are not in the clone. The second check installs the
// package's dev dependencies in npm's temporary clone (from the npm cache when `npm ci` has
// filled it), so it takes a few minutes.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../..', import.meta.url))
const work = mkdtempSync(join(tmpdir(), 'tracklet-git-install-'))
const run = (command, args, cwd, env = {}) =>
  execFileSync(command, args, { cwd, encoding: 'utf8', env: { ...process.env, ...env } })
const npm = (args, cwd, env) => run('npm', [...args, '--no-audit', '--no-fund'], cwd, env)
const seconds = (since) => `${((Date.now() - since) / 1000).toFixed(1)} s`

/** The files the package must ship: each entry point of the exports map, in both formats, and the bin. */
const BUILT = [
  'dist/index.js',
  'dist/index.cjs',
  'dist/index.d.ts',
  'dist/index.d.cts',
  'dist/webhooks/index.js',
  'dist/webhooks/index.cjs',
  'dist/relay/index.js',
  'dist/relay/index.cjs',
  'dist/cli.js',
]

try {
  const head = run('git', ['rev-parse', 'HEAD'], root).trim()
  if (run('git', ['status', '--porcelain', '--untracked-files=no'], root).trim() !== '') {
    console.log(`note: uncommitted changes are not checked; this checks HEAD (${head.slice(0, 12)})`)
  }

  // 1. npm pack from a clone that was never built. Its dependencies are the locked ones this
  // checkout installed, so they are linked rather than installed again.
  const clone = join(work, 'clone')
  run('git', ['clone', '--quiet', root, clone])
  run('git', ['checkout', '--quiet', head], clone)
  if (existsSync(join(clone, 'dist'))) throw new Error('the clone has a dist/ before any build')
  symlinkSync(join(root, 'node_modules'), join(clone, 'node_modules'), 'dir')
  let started = Date.now()
  const [packed] = JSON.parse(npm(['pack', '--json', '--pack-destination', work], clone))
  const shipped = new Set(packed.files.map((file) => file.path))
  const unshipped = BUILT.filter((file) => !shipped.has(file))
  if (unshipped.length > 0) throw new Error(`npm pack from an unbuilt clone left out ${unshipped.join(', ')}`)
  console.log(`npm pack from an unbuilt clone: ${packed.files.length} files, dist/ included (${seconds(started)})`)

  // 2. npm install git+file://…#HEAD into an empty project.
  const project = join(work, 'app')
  mkdirSync(project)
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'app', private: true }))
  started = Date.now()
  npm(['install', `git+file://${root}#${head}`], project, { npm_config_prefer_offline: 'true' })
  const installed = join(project, 'node_modules', 'tracklet')
  const missing = BUILT.filter((file) => !existsSync(join(installed, file)))
  if (missing.length > 0) throw new Error(`the git install has no ${missing.join(', ')}: the package was not built`)
  if (existsSync(join(installed, 'src'))) throw new Error('the git install shipped src/: the files list was ignored')
  console.log(`npm install git+file://…#${head.slice(0, 12)}: dist/ built and installed (${seconds(started)})`)

  const version = JSON.parse(
    run(process.execPath, ['-p', 'JSON.stringify(require("tracklet/package.json").version)'], project),
  )
  const uses = {
    'require()': [
      '-e',
      `const { Analytics } = require('tracklet'); const { sign } = require('tracklet/webhooks');
       const { createRelay } = require('tracklet/relay');
       if (typeof Analytics !== 'function' || typeof sign !== 'function' || typeof createRelay !== 'function') process.exit(1)`,
    ],
    'import()': [
      '--input-type=module',
      '-e',
      `const { Analytics } = await import('tracklet'); const { sign } = await import('tracklet/webhooks');
       const { createRelay } = await import('tracklet/relay');
       if (typeof Analytics !== 'function' || typeof sign !== 'function' || typeof createRelay !== 'function') process.exit(1)`,
    ],
  }
  for (const [how, args] of Object.entries(uses)) {
    run(process.execPath, args, project)
    console.log(`${how}: the SDK, the Webhooks destination and the relay load`)
  }
  const printed = run(join(project, 'node_modules', '.bin', 'tracklet'), ['--version'], project).trim()
  if (!printed.includes(version))
    throw new Error(`tracklet --version printed ${JSON.stringify(printed)}, not ${version}`)
  console.log(`the tracklet command: ${printed}`)
  console.log('installs from source: ok (npm pack and a git install both ship dist/)')
} finally {
  rmSync(work, { recursive: true, force: true })
}
