// The relay's stores are internal (not in the package's exports), so a bench that drives one
// bundles it from the TypeScript source: next to this file, so that its dependencies resolve from
// the project, and deleted once loaded.
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { build } from 'esbuild'

/** Imports the module whose text is `contents` (re-exports of files under src/, from the project root). */
export async function importSource(contents) {
  const out = join(import.meta.dirname, `.bench-source-${process.pid}-${Math.random().toString(36).slice(2)}.mjs`)
  const result = await build({
    stdin: { contents, resolveDir: join(import.meta.dirname, '..'), loader: 'ts' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    write: false,
    logLevel: 'silent',
  })
  writeFileSync(out, result.outputFiles[0].text)
  try {
    return await import(pathToFileURL(out).href)
  } finally {
    rmSync(out, { force: true })
  }
}
