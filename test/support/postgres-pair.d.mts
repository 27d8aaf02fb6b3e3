/** One server of a {@link PostgresPair}. */
export interface PairServer {
  readonly port: number
  /** `postgres://postgres:…@127.0.0.1:PORT/<database>` (default `postgres`). */
  url(database?: string): string
  /** SIGKILL to the server's process group: a crash, as a host that dies. */
  kill(): Promise<void>
}

/** A PostgreSQL primary and a streaming standby started for tests or benchmarks (see the .mjs). */
export interface PostgresPair {
  readonly primary: PairServer
  readonly standby: PairServer & {
    /** `pg_ctl promote`: the standby becomes a primary, and waits until it accepts writes. */
    promote(): Promise<void>
  }
  /** Creates a database on the primary (streamed to the standby); returns its two-host URL. */
  createDatabase(name?: string): Promise<string>
  /** One statement on `url`, and its rows. */
  query<T = Record<string, unknown>>(url: string, text: string, values?: unknown[]): Promise<T[]>
  /** Kills both servers and removes their folders. */
  stop(): Promise<void>
}

/** Starts a primary and a streaming standby; `synchronous`: the standby is synchronous. */
export function startPostgresPair(options?: {
  synchronous?: boolean
  durable?: boolean
  settings?: string[]
}): Promise<PostgresPair>
