import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'

// What a user sees of the package before running any of it: the licence, where the code and the
// issues live, and which Node.js versions it installs on. Read from the files npm publishes.
const ROOT = new URL('../../', import.meta.url)
const read = (path: string) => readFileSync(new URL(path, ROOT), 'utf8')
const pkg = JSON.parse(read('package.json'))
const REPOSITORY = 'https://github.com/tracklet/tracklet'

describe('package metadata', () => {
  it('LICENSE is the MIT licence of the Tracklet contributors, as package.json says', () => {
    expect(pkg.license).toBe('MIT')
    const license = read('LICENSE')
    expect(license.split('\n')[0]).toBe('MIT License')
    expect(license).toContain('Copyright (c) 2026 Tracklet contributors')
    expect(license).toContain('THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND')
  })

  it('names the repository, its home page, where to file bugs, and keywords to find it by', () => {
    expect(pkg.repository).toEqual({ type: 'git', url: `git+${REPOSITORY}.git` })
    expect(pkg.homepage).toBe(`${REPOSITORY}#readme`)
    expect(pkg.bugs).toEqual({ url: `${REPOSITORY}/issues` })
    expect(pkg.keywords).toEqual(expect.arrayContaining(['analytics', 'webhooks', 'relay']))
  })

  it('builds itself in prepare, the one script npm runs for npm pack, npm publish and a git install', () => {
    // prepack is not run for a git dependency (test/packaging/git-install.mjs installs one).
    expect(pkg.scripts.prepare).toMatch(/\bbuild\b/)
    expect(pkg.scripts.prepack).toBeUndefined()
  })
})

describe('engines', () => {
  const ranges = String(pkg.engines.node)
    .split('||')
    .map((range) => range.trim())
  const parsed = ranges.map((range) => /^\^(\d+)(?:\.(\d+)\.(\d+))?$/.exec(range))

  it('allows only whole Node.js majors, each one better-sqlite3 (the SQLite driver) supports', () => {
    // A caret range per major: an open range such as ">=20.18.1" would let npm install on a major
    // the native driver has no build for.
    expect(parsed.every((match) => match !== null)).toBe(true)
    const majors = parsed.map((match) => Number(match![1]))
    // The locked version's engines, as package-lock.json records them: what is installed can differ
    // (CI's Node 24 run installs better-sqlite3 13 over the locked 12 without saving).
    const lock = JSON.parse(read('package-lock.json'))
    const driverEngines = lock.packages['node_modules/better-sqlite3'].engines.node as string
    const driverMajors = [...driverEngines.matchAll(/(\d+)\.x/g)].map((match) => Number(match[1]))
    expect(driverMajors.length).toBeGreaterThan(0)
    expect(majors.filter((major) => !driverMajors.includes(major))).toEqual([])
    expect(majors).toContain(Number(process.versions.node.split('.')[0]))
  })

  it('starts at the version the README states', () => {
    const lowest = parsed.map((match) => match!.slice(1).map(Number)).sort((a, b) => a[0]! - b[0]!)[0]!
    const minimum = `${lowest[0]}.${lowest[1] ?? 0}.${lowest[2] ?? 0}`
    const stated = [...read('README.md').matchAll(/Node\.js (\d+\.\d+(?:\.\d+)?) or later/g)].map((match) => match[1])
    expect(stated).toEqual([minimum])
  })
})
