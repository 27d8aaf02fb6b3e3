import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build, type Options } from 'tsup'
import projectConfig from '../../tsup.config'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** Where the runtimes' binaries are installed (`.ci/run` installs them; see `RUNTIMES`). */
export const RUNTIMES_DIR = join(ROOT, '.tmp', 'runtimes', 'node_modules')

/**
 * A folder holding `node_modules/tracklet` as a runtime sees the package: the project's own
 * `exports` (read from package.json, so its conditions are what is tested) over a fresh build of
 * the fetch entry. The Node entries are absent: a runtime that picked one would fail to load.
 */
export async function runtimePackage(): Promise<{ dir: string; remove: () => Promise<void> }> {
  const configs: Options[] = Array.isArray(projectConfig) ? projectConfig : [projectConfig as Options]
  const webConfig = configs.find((config) => typeof config.entry === 'object' && 'web/index' in config.entry)
  if (webConfig === undefined) throw new Error('tsup.config.ts has no `web/index` entry')
  await mkdir(join(ROOT, '.tmp'), { recursive: true })
  const dir = await mkdtemp(join(ROOT, '.tmp', 'runtime-'))
  const packageDir = join(dir, 'node_modules', 'tracklet')
  await build({ ...webConfig, outDir: join(packageDir, 'dist'), config: false, silent: true, sourcemap: false })
  const { name, version, type, exports } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8'))
  await writeFile(join(packageDir, 'package.json'), JSON.stringify({ name, version, type, exports }))
  await writeFile(join(dir, 'package.json'), JSON.stringify({ type: 'module', dependencies: { tracklet: version } }))
  await copyFile(join(ROOT, 'test', 'runtimes', 'probe.mjs'), join(dir, 'probe.mjs'))
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) }
}
