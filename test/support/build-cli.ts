import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build, type Options } from 'tsup'
import projectConfig from '../../tsup.config'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/**
 * Builds the `tracklet` command exactly as `npm run build` does (the CLI entry of the project's
 * tsup config), into a fresh folder under `.tmp/` — inside the project, so that the bundle's
 * external imports (undici, debug, better-sqlite3) resolve from its node_modules. Never touches `dist/`.
 */
export async function buildCli(): Promise<{ cliPath: string; remove: () => Promise<void> }> {
  const configs: Options[] = Array.isArray(projectConfig) ? projectConfig : [projectConfig as Options]
  const cliConfig = configs.find((config) => isRecord(config.entry) && 'cli' in config.entry)
  if (cliConfig === undefined) throw new Error('tsup.config.ts has no `cli` entry')

  await mkdir(join(ROOT, '.tmp'), { recursive: true })
  const outDir = await mkdtemp(join(ROOT, '.tmp', 'cli-'))
  await build({ ...cliConfig, outDir, config: false, silent: true, sourcemap: false })
  return { cliPath: join(outDir, 'cli.js'), remove: () => rm(outDir, { recursive: true, force: true }) }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
