import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'tsup'

const root = fileURLToPath(new URL('../..', import.meta.url))

/**
 * Builds the `tracklet` command into a fresh folder under `.tmp/` (inside the package, so its
 * dependencies resolve from node_modules) and returns the script's path and a cleanup. Child
 * processes need JavaScript: Node 20 cannot run the TypeScript sources itself.
 */
export async function buildCli(): Promise<{ cli: string; remove: () => void }> {
  const outDir = join(root, '.tmp', `cli-${process.pid}-${Date.now()}`)
  mkdirSync(outDir, { recursive: true })
  await build({
    config: false,
    entry: { cli: join(root, 'src/cli/main.ts') },
    outDir,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    silent: true,
    external: ['better-sqlite3', 'debug', 'p-queue', 'undici'],
  })
  return { cli: join(outDir, 'cli.js'), remove: () => rmSync(outDir, { recursive: true, force: true }) }
}
