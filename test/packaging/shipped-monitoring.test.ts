import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

// The README and docs/operations.md tell operators how to use the Prometheus rules and Grafana
// dashboard the package ships: their snippets must agree with the shipped files (a scrape job named
// otherwise than the rules expect leaves "relay down" silent), and the files must be in the package.
const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8')
const RULES = 'examples/prometheus/tracklet.rules.yml'
const DASHBOARD = 'examples/grafana/tracklet-dashboard.json'
const DOCUMENTS = ['README.md', 'docs/operations.md']

/** The YAML code blocks of a document. */
function yamlBlocks(document: string): string[] {
  return [...read(document).matchAll(/```yaml\n([\s\S]*?)```/g)].map((match) => match[1]!)
}

describe('the shipped Prometheus rules and Grafana dashboard, as the docs present them', () => {
  it("scrape the relays under the job the rules select (every snippet's job_name)", () => {
    const jobs = new Set([...read(RULES).matchAll(/\bjob="([^"]+)"/g)].map((match) => match[1]))
    expect([...jobs]).toEqual(['tracklet'])
    for (const document of DOCUMENTS) {
      const named = yamlBlocks(document).flatMap((block) =>
        [...block.matchAll(/job_name:\s*("?)([\w.-]+)\1/g)].map((match) => match[2]),
      )
      expect(named.length, `${document} has a scrape config`).toBeGreaterThan(0)
      expect(new Set(named), document).toEqual(jobs)
    }
  })

  it('load the rules file by its shipped name', () => {
    for (const document of DOCUMENTS) {
      const files = yamlBlocks(document).flatMap((block) =>
        [...block.matchAll(/rule_files:\s*\[([^\]]*)\]/g)].flatMap((match) => match[1]!.split(/,\s*/)),
      )
      expect(files, document).toEqual([basename(RULES)])
    }
  })

  it('name the files where the package ships them, and the package ships them', () => {
    expect(read('README.md')).toContain(`node_modules/tracklet/${RULES}`)
    expect(read('README.md')).toContain(`node_modules/tracklet/${DASHBOARD}`)
    expect(read('docs/operations.md')).toContain(`(../${RULES})`)
    expect(read('docs/operations.md')).toContain(`(../${DASHBOARD})`)
    const packed = JSON.parse(
      execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8' }),
    ) as { files: { path: string }[] }[]
    const paths = packed[0]!.files.map((file) => file.path)
    expect(paths).toEqual(expect.arrayContaining([RULES, DASHBOARD]))
  })
})
