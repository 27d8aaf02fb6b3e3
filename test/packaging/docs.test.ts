import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, normalize } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

// The README is also the package's page on npm, where only the published files exist (dist/,
// README.md, LICENSE, package.json): a relative link to docs/ or examples/ is dead there. The
// docs and CONTRIBUTING.md live in the repository and name its files; these checks keep every
// link and every path they name pointing at something that exists.
const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8')
const REPOSITORY = 'https://github.com/tracklet/tracklet'
const REPOSITORY_FILE =
  /^https:\/\/(?:github\.com\/tracklet\/tracklet\/(?:blob|tree)|raw\.githubusercontent\.com\/tracklet\/tracklet)\/main\/([^#?]*)/
const DOCS = readdirSync(join(ROOT, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .map((name) => `docs/${name}`)

/** The targets of a document's Markdown links and images, outside code blocks. */
function links(document: string): string[] {
  const prose = read(document).replace(/```[\s\S]*?```/g, '')
  return [...prose.matchAll(/!?\[[^\]]*\]\(([^)\s]+)\)/g)].map((match) => match[1]!)
}

/** The repository path a link names, or undefined for a link elsewhere (or within the page). */
function repositoryPath(link: string, from: string): string | undefined {
  const absolute = REPOSITORY_FILE.exec(link)
  if (absolute !== null) return decodeURIComponent(absolute[1]!)
  if (/^[a-z]+:/i.test(link) || link.startsWith('#')) return undefined
  return normalize(join(dirname(from), decodeURIComponent(link.replace(/[#?].*$/, ''))))
}

describe('README.md, as npm shows it', () => {
  it('links only to absolute URLs (or within itself), each file of the repository it names existing', () => {
    const found = links('README.md')
    expect(found.length).toBeGreaterThan(0)
    expect(found.filter((link) => !/^https:\/\//.test(link) && !link.startsWith('#'))).toEqual([])
    const named = found.map((link) => repositoryPath(link, 'README.md')).filter((path) => path !== undefined)
    expect(named.filter((path) => !existsSync(join(ROOT, path)))).toEqual([])
    // The links and package.json agree on where the repository is.
    expect(JSON.parse(read('package.json')).repository.url).toBe(`git+${REPOSITORY}.git`)
  })

  it('is the pitch, install, a quick start under 15 lines, the two commands, and a contents of docs/', () => {
    const readme = read('README.md')
    const quickStart = /## Quick start\n+```ts\n([\s\S]*?)```/.exec(readme)
    expect(quickStart).not.toBeNull()
    expect(quickStart![1]!.trimEnd().split('\n').length).toBeLessThan(15)
    expect(readme).toContain('npm install tracklet')
    expect(readme).toMatch(/^npm run demo\b/m)
    expect(readme).toMatch(/^npm test\b/m)
    const named = links('README.md').map((link) => repositoryPath(link, 'README.md'))
    for (const doc of ['sdk', 'webhooks', 'relay', 'operations', 'architecture']) {
      expect(named).toContain(`docs/${doc}.md`)
    }
  })

  it("names the same metrics as docs/operations.md, whose table a metrics test ties to the relay's own", () => {
    const metricNames = (document: string) => new Set(read(document).match(/\btracklet_[a-z_]+/g))
    expect([...metricNames('README.md')].sort()).toEqual([...metricNames('docs/operations.md')].sort())
  })
})

describe('docs/ and CONTRIBUTING.md', () => {
  it.each([...DOCS, 'CONTRIBUTING.md'])('%s links to files that exist', (document) => {
    const named = links(document)
      .map((link) => repositoryPath(link, document))
      .filter((path) => path !== undefined)
    expect(named.filter((path) => !existsSync(join(ROOT, path)))).toEqual([])
  })

  // Folders the docs propose for a change not made yet ("a third store (say MySQL)").
  const PROPOSED = new Set(['src/relay/store/mysql/'])

  it.each(['docs/architecture.md', 'CONTRIBUTING.md'])('%s names only folders and files that exist', (document) => {
    const missing: string[] = []
    for (const line of read(document).split('\n')) {
      const tokens = [...line.matchAll(/`([^`]+)`/g)].map((match) => match[1]!.replace(/\s+/g, ''))
      // A placeholder (`src/relay/destinations/<name>/`) names a kind of folder: its parent must exist.
      const paths = tokens
        .filter((token) => /^(?:src|test|bench|examples|docs)(?:\/|$)/.test(token))
        .flatMap(expand)
        .map((path) => path.replace(/<[^>]+>.*$/, ''))
      for (const path of paths) {
        if (!PROPOSED.has(path) && !existsSync(join(ROOT, path))) missing.push(path)
      }
      // A bare file name on a line that names folders is a file in one of them (or below).
      const folders = paths.filter((path) => !PROPOSED.has(path)).map((path) => (isFile(path) ? dirname(path) : path))
      const bareFiles = tokens.filter((token) => /^[\w.-]+\.(?:ts|mjs|cjs|json)$/.test(token))
      if (folders.length === 0) continue
      for (const file of bareFiles) {
        if (!folders.some((folder) => containsFile(folder, file))) missing.push(`${file} (in ${folders.join(', ')})`)
      }
    }
    expect(missing).toEqual([])
  })
})

/** `src/relay/{http,ingest}` → `src/relay/http`, `src/relay/ingest`. */
function expand(path: string): string[] {
  const braces = /\{([^}]*)\}/.exec(path)
  if (braces === null) return [path]
  return braces[1]!.split(',').flatMap((part) => expand(path.replace(braces[0], part)))
}

function isFile(path: string): boolean {
  return existsSync(join(ROOT, path)) && statSync(join(ROOT, path)).isFile()
}

function containsFile(folder: string, name: string): boolean {
  const full = join(ROOT, folder)
  if (!existsSync(full) || !statSync(full).isDirectory()) return false
  return readdirSync(full, { recursive: true }).some((entry) => String(entry).split('/').at(-1) === name)
}
