// The warehouse's modules, bundled from src/ for the benches (they are not in dist/'s public API):
// esbuild (tsup's own) compiles them into one file under .tmp/ (git-ignored), where `pg` and
// `debug` resolve from the project's node_modules.
import { mkdirSync, mkdtempSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { build } from 'esbuild'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

export async function loadWarehouse() {
  mkdirSync(join(ROOT, '.tmp'), { recursive: true })
  const outfile = join(mkdtempSync(join(ROOT, '.tmp', 'warehouse-bench-')), 'warehouse.mjs')
  const dir = './src/relay/destinations/warehouse'
  await build({
    stdin: {
      contents: [
        `export * from '${dir}/sender'`,
        `export * from '${dir}/settings'`,
        `export * from '${dir}/schema/rows'`,
        `export * from '${dir}/schema/evolution'`,
        `export * from '${dir}/postgres/sql'`,
      ].join('\n'),
      resolveDir: ROOT,
      loader: 'ts',
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: ['pg', 'debug'],
    outfile,
    logLevel: 'error',
  })
  return import(pathToFileURL(outfile).href)
}
