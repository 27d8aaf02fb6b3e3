import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

// Test files run three at a time against one shared PostgreSQL server (test/support/postgres.ts).
// A test that ends sessions must end only its own database's: one that ended every relay's
// notification connection server-wide once failed a file running beside it ("terminating
// connection due to administrator command"). Each such statement names its database or a pid.
const root = join(import.meta.dirname, '..', '..')

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return testFiles(path)
    return /\.(ts|mjs)$/.test(entry.name) ? [path] : []
  })
}

describe('tests that end PostgreSQL sessions', () => {
  it('end only their own database’s sessions (the call in the select list), or one session by its pid', () => {
    const unscoped: string[] = []
    for (const file of testFiles(root)) {
      const text = readFileSync(file, 'utf8')
      for (const match of text.matchAll(/pg_terminate_backend\(/g)) {
        // The statement around the call: from the quote before it to the quote after it.
        const start = Math.max(text.lastIndexOf('`', match.index), text.lastIndexOf('"', match.index))
        const end = text.indexOf(text[start]!, match.index)
        const statement = text.slice(start, end)
        if (file.endsWith('session-scoping.test.ts')) continue
        // In the WHERE clause it may run before the database's condition (PostgreSQL orders the
        // conditions as it likes, and datname comes from a join): it must be in the select list.
        const inWhere = /\bWHERE\b[\s\S]*pg_terminate_backend\(/i.test(statement)
        const scoped =
          (/datname\s*=\s*current_database\(\)/.test(statement) && !inWhere) ||
          /pg_terminate_backend\(\$\d\)/.test(statement)
        if (!scoped) unscoped.push(`${relative(root, file)}: ${statement.slice(0, 80)}`)
      }
    }
    expect(unscoped).toEqual([])
  })
})
