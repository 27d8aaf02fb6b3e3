// CI: keeps the better-sqlite3 that `npm ci` compiled as a prebuild in npm's cache, so that later
// installs of the same version on the same Node (the git-install check's, which installs the
// package's dev dependencies in npm's temporary clone) unpack it instead of compiling SQLite again
// (minutes on 2 cores). better-sqlite3 installs with prebuild-install, which downloads its
// prebuilds from GitHub and, before that, looks in npm's cache under the name this writes; on a
// machine that reaches only the npm registry, every install compiles.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

const require = createRequire(join(process.cwd(), 'package.json'))
const packageDir = dirname(require.resolve('better-sqlite3/package.json'))
const binary = 'build/Release/better_sqlite3.node'
if (!existsSync(join(packageDir, binary))) {
  console.log('better-sqlite3 has no compiled binary here; nothing to keep')
  process.exit(0)
}
const fromPackage = createRequire(join(packageDir, 'package.json'))
const pkg = fromPackage('./package.json')
const rc = fromPackage('prebuild-install/rc')(pkg)
const util = fromPackage('prebuild-install/util')
const opts = { ...rc, pkg, abi: rc.abi ?? process.versions.modules }
const cached = util.cachedPrebuild(util.getDownloadUrl(opts))
if (existsSync(cached)) {
  console.log(`better-sqlite3 ${pkg.version}: a prebuild is already in npm's cache`)
} else {
  mkdirSync(dirname(cached), { recursive: true })
  execFileSync('tar', ['-czf', cached, '-C', packageDir, binary])
  console.log(`better-sqlite3 ${pkg.version}: the compiled binary kept in npm's cache for later installs`)
}
