import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { runTracklet, stopAll, useCli } from '../support/cli-process'

// `tracklet relay --check` compiles each destination's function as the start would (docs/functions.md).
const cli = useCli()
const dir = mkdtempSync(join(tmpdir(), 'tracklet-check-functions-'))
afterEach(stopAll)
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function writeConfig(functions: Record<string, unknown>[]): string {
  const path = join(dir, 'tracklet.json')
  writeFileSync(
    path,
    JSON.stringify({
      adminToken: 'an-admin-token-long-enough',
      sources: functions.map((fn, i) => ({
        name: `s${i}`,
        writeKey: `wk-${i}`,
        destinations: { Webhooks: { webhooks: [{ url: 'https://hooks.example.com/a' }], function: fn } },
      })),
    }),
  )
  return path
}

describe('tracklet relay --check with functions', () => {
  it('passes functions that compile, read from a file relative to the config', async () => {
    writeFileSync(join(dir, 'ok.js'), 'function onTrack(e) { return e }')
    const result = await runTracklet(cli.path, ['relay', '--check', '--config', writeConfig([{ file: 'ok.js' }])])
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
  })

  it('fails naming the path of each function that cannot be read or does not compile', async () => {
    writeFileSync(join(dir, 'broken.js'), 'function onTrack( {')
    const config = writeConfig([
      { file: 'broken.js' },
      { file: 'missing.js' },
      { code: 'function transformEvent(e) {' },
    ])
    const result = await runTracklet(cli.path, ['relay', '--check', '--config', config])
    expect(result.code).toBe(1)
    expect(result.stdout).toBe('')
    const lines = result.stderr.split('\n').filter(Boolean)
    expect(lines).toHaveLength(3)
    expect(lines.join('\n')).toMatch(
      /sources\[0\]\.destinations\.Webhooks\.function\.file: .*broken\.js: the function does not compile: SyntaxError/,
    )
    expect(lines.join('\n')).toMatch(
      /sources\[1\]\.destinations\.Webhooks\.function\.file: cannot read the function's file: .*missing\.js/,
    )
    expect(lines.join('\n')).toMatch(/sources\[2\]\.destinations\.Webhooks\.function\.code: .*does not compile/)
  })
})
