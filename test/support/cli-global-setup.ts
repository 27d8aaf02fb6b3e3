import type { TestProject } from 'vitest/node'
import { buildCli } from './build-cli'

declare module 'vitest' {
  export interface ProvidedContext {
    /** The `tracklet` command built once for the run (see `build-cli.ts`), for `useCli()`. */
    cliPath: string
  }
}

/**
 * Builds the `tracklet` command once for the whole test run, as `npm run build` builds it (never
 * touching `dist/`), and removes it at the end: every file that runs the command in child
 * processes runs this one build (`useCli()` in `cli-process.ts`), instead of building its own.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const { cliPath, remove } = await buildCli()
  project.provide('cliPath', cliPath)
  return remove
}
