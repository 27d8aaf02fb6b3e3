import pg from 'pg'
import { expect, it } from 'vitest'
import { connectorFor } from '../../../src/relay/kit/postgres/connect'
import { freshPostgresDatabase, sql } from '../../support/postgres'

// A connection the relay opened and then refused (its host turned out a standby, or read-only, as
// in a failover) is being ended when its server may still say something: a primary killed right
// then sends "terminating connection due to unexpected postmaster exit". Told to a client nobody
// listens to, that is an uncaught exception that ends the process (failover.test.ts met it).

it('lets a connection it refused end quietly, whatever its server says after', async () => {
  const url = await freshPostgresDatabase()
  const database = new URL(url).pathname.slice(1)
  const { Client, connectionString } = connectorFor(pg, `${url}?target_session_attrs=read-write`, 5000)
  // The first connection finds the host that accepts writes (kept); then that host turns read-only.
  const first = new Client({ connectionString })
  await first.connect()
  await first.end()
  await sql(url, `ALTER DATABASE "${database}" SET default_transaction_read_only = on`)
  const refused = new Client({ connectionString })
  await expect(refused.connect()).rejects.toThrow(/read-only/)
  const late = new Error('terminating connection due to unexpected postmaster exit')
  expect(() => refused.emit('error', late)).not.toThrow()
  // And at any other point of a connection's life: never opened, or open and idle.
  expect(() => new Client({ connectionString }).emit('error', late)).not.toThrow()
})
