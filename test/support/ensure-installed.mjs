// Runs before `npm test` and `npm run demo` (as their pre-scripts) so that each is the one
// command a fresh clone needs: it installs the locked dependencies when they are missing or older
// than package-lock.json, and does nothing (one stat) when they are current.
import { spawnSync } from 'node:child_process'
import { lstatSync, statSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../..', import.meta.url))

function mtime(path) {
  try {
    return statSync(new URL(path, `file://${root}/`)).mtimeMs
  } catch {
    return undefined
  }
}

// A node_modules that is a symlink belongs to another tree (a git worktree sharing it): npm ci
// here would empty that tree's folder through the link. Leave it alone.
try {
  if (lstatSync(new URL('node_modules', `file://${root}/`)).isSymbolicLink()) process.exit(0)
} catch {}

// npm writes node_modules/.package-lock.json at the end of every install.
const installed = mtime('node_modules/.package-lock.json')
const locked = mtime('package-lock.json')
if (installed === undefined || (locked !== undefined && installed < locked)) {
  console.error('tracklet: installing the locked dependencies (npm ci) first…')
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
  const result = spawnSync(npm, ['ci', '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit' })
  process.exit(result.status ?? 1)
}
