import { inject } from 'vitest'
import pg from 'pg'

let created = 0

/**
 * Creates an empty database on the test run's PostgreSQL server (started by the global set-up)
 * and returns its URL: a test that starts a relay or opens a store on it sees only its own rows.
 */
export async function freshPostgresDatabase(): Promise<string> {
  const adminUrl = inject('postgresAdminUrl')
  const name = `t_${process.pid}_${Date.now().toString(36)}_${created++}`
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    await client.query(`CREATE DATABASE ${name}`)
  } finally {
    await client.end()
  }
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return url.toString()
}

/** Runs one statement on the database at `url` (a test's own look at the rows), and returns the rows. */
export async function sql<T = Record<string, unknown>>(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query(text, values)).rows as T[]
  } finally {
    await client.end()
  }
}
