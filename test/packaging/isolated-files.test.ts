import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'
import { ISOLATED } from '../vitest.config'

// The suite's files share one module graph per worker (test/vitest.config.ts): a file that mocks a
// module, or sets process-wide state of a shared module and reads it back (the relay's log sinks,
// level and redactions, the `debug` package's namespaces), or fakes the timers (which a module
// loaded meanwhile may keep: undici's request timeouts), must run in a graph of its own.
const root = fileURLToPath(new URL('../..', import.meta.url))
const PROCESS_WIDE = /vi\.mock\(|useFakeTimers|addLogSink|useLogLevel|redactFromLog|createDebug|debug\.enable/

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return testFiles(path)
    return entry.name.endsWith('.test.ts') ? [relative(root, path)] : []
  })
}

it('runs every file that mocks a module or sets shared process-wide state in a graph of its own', () => {
  const files = testFiles(join(root, 'test'))
  const needing = files.filter(
    (file) =>
      file !== 'test/packaging/isolated-files.test.ts' && PROCESS_WIDE.test(readFileSync(join(root, file), 'utf8')),
  )
  expect(needing.length).toBeGreaterThan(0)
  expect(needing.filter((file) => !ISOLATED.includes(file))).toEqual([])
  // And nothing listed that no longer exists (a moved file would silently join the shared graph).
  expect(ISOLATED.filter((file) => !files.includes(file))).toEqual([])
})
