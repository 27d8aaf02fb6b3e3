import type { SqliteDatabase } from './schema'

/**
 * The file of `db`'s main database as SQLite resolved it (the path given may be relative to a
 * directory left since); `undefined` for an in-memory or temporary database.
 */
export function databaseFile(db: SqliteDatabase): string | undefined {
  const databases = db.pragma('database_list') as { name: string; file: string }[]
  const main = databases.find((d) => d.name === 'main')
  return main?.file || undefined
}
