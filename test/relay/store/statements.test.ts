import { describe, expect, it } from 'vitest'
import { POSTGRES_ONLY, POSTGRES_STATEMENTS } from '../../../src/relay/store/postgres/statements'
import { FIELD_ORDER } from '../../../src/relay/store/filter'
import { SQLITE_ONLY, SQLITE_STATEMENTS } from '../../../src/relay/store/sqlite/statements'
import { openSqliteStoreWithDb } from '../fixtures/store'

// The two dialects keep their statements under the same names, so that a statement changed in one
// is found, by its name, in the other: a name in one set and not the other is a drift to fix (or a
// statement only one dialect needs, listed as such beside it, and in docs/maintainers.md).
const shared = (statements: object, only: readonly string[]) =>
  Object.keys(statements)
    .filter((name) => !only.includes(name))
    .sort()

// Every filter field (FIELD_ORDER), and none: the texts a filtered statement can take.
const FILTERED = new Set(['listNewest', 'countDeadLetters', 'retryMatching'])

// The arguments a statement's text is made with: list lengths, or the filter's fields.
function argumentsOf(name: string): [never, never][] {
  const args = FILTERED.has(name)
    ? [
        [[], false],
        [FIELD_ORDER, true],
      ]
    : [
        [1, 1],
        [3, 2],
      ]
  return args as [never, never][]
}

describe('the statements of the two dialects', () => {
  it('have the same names, but for those only one dialect needs', () => {
    expect(shared(SQLITE_STATEMENTS, SQLITE_ONLY)).toEqual(shared(POSTGRES_STATEMENTS, POSTGRES_ONLY))
  })

  it('list as dialect-only only statements the other dialect has no statement of that name for', () => {
    expect(SQLITE_ONLY.filter((name) => name in POSTGRES_STATEMENTS)).toEqual([])
    expect(POSTGRES_ONLY.filter((name) => name in SQLITE_STATEMENTS)).toEqual([])
  })

  it('on SQLite, all compile against the schema, whatever the length of their lists', async () => {
    const { store, db } = await openSqliteStoreWithDb()
    try {
      for (const [name, statement] of Object.entries(SQLITE_STATEMENTS)) {
        const texts = typeof statement === 'string' ? [statement] : argumentsOf(name).map((args) => statement(...args))
        for (const text of texts) expect(() => db.prepare(text), name).not.toThrow()
      }
    } finally {
      await store.close()
    }
  })
})
