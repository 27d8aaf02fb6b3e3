import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { RELAY_PEERS } from '../../src/relay/peers'

// What only a relay uses stays out of the SDK's install (test/packaging/sdk-only-install.mjs
// measures it): package.json, src/relay/peers.ts and the README's install lines list the same packages.
const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8')
const pkg = JSON.parse(read('package.json'))
const DRIVERS = ['better-sqlite3', 'pg']
const RELAY_ONLY = Object.values(RELAY_PEERS).flatMap((group) => [...group.packages])

describe("the relay's optional peer dependencies", () => {
  it('are the database drivers and the packages of src/relay/peers.ts, each optional and none a dependency', () => {
    expect(Object.keys(pkg.peerDependencies).sort()).toEqual([...DRIVERS, ...RELAY_ONLY].sort())
    for (const name of Object.keys(pkg.peerDependencies)) {
      expect(pkg.peerDependenciesMeta[name], name).toEqual({ optional: true })
      expect(pkg.dependencies[name], name).toBeUndefined()
      // Installed for the tests, in the range a user gets.
      if (!DRIVERS.includes(name)) expect(pkg.devDependencies[name], name).toBe(pkg.peerDependencies[name])
    }
  })

  it("are each feature's install line in the README", () => {
    const install = /## Install\n+```sh\n([\s\S]*?)```/.exec(read('README.md'))?.[1] ?? ''
    const lines = install.split('\n').map((line) => line.replace(/#.*/, '').trim().split(/\s+/))
    for (const [feature, group] of Object.entries(RELAY_PEERS)) {
      const line = lines.find((words) => group.packages.every((name) => words.includes(name)))
      expect(line, `README: an npm install line for ${feature} (${group.packages.join(' ')})`).toBeDefined()
    }
    for (const driver of DRIVERS) {
      expect(
        lines.some((words) => words.includes(driver) && words.includes('prom-client')),
        driver,
      ).toBe(true)
    }
  })
})
