import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { databaseValue, describeStore } from '../../../src/relay/config/database-value'
import { ConfigProblems } from '../../../src/relay/kit/rules'
import { parseDatabaseHosts, TARGET_SESSION_ATTRS } from '../../../src/relay/kit/postgres/hosts'
import { describeDatabase, redact } from '../../../src/relay/kit/postgres/pool'
import type { DatabaseHost } from '../../../src/relay/kit/postgres/hosts'
import { NO_PRIMARY_CODE, PrimaryFinder } from '../../../src/relay/kit/postgres/primary-finder'

// libpq's several-host URLs, read without the network; and the search for the host that accepts writes.

const TWO_HOSTS = 'postgres://relay:s3cr%40t@db1:5432,db2:6543/tracklet?target_session_attrs=read-write&sslmode=disable'

function problemsOf(value: string): string[] {
  const problems = new ConfigProblems()
  databaseValue(value, 'database', problems)
  return problems.list.map(({ field, message }) => `${field}: ${message}`)
}

describe('a database URL with several hosts', () => {
  it('names each host, keeps the other parameters and drops target_session_attrs for pg', () => {
    const parsed = parseDatabaseHosts(TWO_HOSTS)
    expect(parsed.hosts).toEqual([
      { host: 'db1', port: 5432 },
      { host: 'db2', port: 6543 },
    ])
    expect(parsed.targetSessionAttrs).toBe('read-write')
    expect(parsed.followsPrimary).toBe(true)
    expect(parsed.password).toBe('s3cr@t')
    expect(parsed.hosts.map(parsed.urlFor)).toEqual([
      'postgres://relay:s3cr%40t@db1:5432/tracklet?sslmode=disable',
      'postgres://relay:s3cr%40t@db2:6543/tracklet?sslmode=disable',
    ])
  })

  it('reads one host as pg does: nothing to follow, default port, IPv6 in brackets', () => {
    expect(parseDatabaseHosts('postgres://u@localhost/db')).toMatchObject({
      hosts: [{ host: 'localhost', port: 5432 }],
      followsPrimary: false,
    })
    expect(parseDatabaseHosts('postgres://[::1]:5433,db2/db').hosts).toEqual([
      { host: '::1', port: 5433 },
      { host: 'db2', port: 5432 },
    ])
    // A password with a raw `@` stays in the user info, never in a host name.
    expect(parseDatabaseHosts('postgres://u:p@ss@db1,db2/db').hosts.map((h) => h.host)).toEqual(['db1', 'db2'])
  })

  it('refuses a target_session_attrs that would send writes to a standby, naming it', () => {
    for (const attrs of ['read-only', 'standby', 'prefer-standby', 'bogus']) {
      const [problem] = problemsOf(`postgres://u:pw@db1,db2/db?target_session_attrs=${attrs}`)
      expect(problem).toBe(
        `database: target_session_attrs=${attrs} is not supported: the relay writes, so use any, read-write, primary`,
      )
    }
    expect(problemsOf(TWO_HOSTS)).toEqual([])
    expect(problemsOf('postgres://u:pw@db1:x,db2/db')).toEqual([
      'database: has an invalid port for db1 ("x"): a number from 1 to 65535',
    ])
  })

  it('lists in docs/high-availability.md the target_session_attrs the relay supports', () => {
    const docs = readFileSync(new URL('../../../docs/high-availability.md', import.meta.url), 'utf8')
    const listed = /Supported values: ([^.]+)\./.exec(docs.replace(/\s+/g, ' '))?.[1]
    expect(listed?.split(', ').map((value) => value.replaceAll('`', ''))).toEqual([...TARGET_SESSION_ATTRS])
  })

  it('is described by its hosts and database, never its password', () => {
    expect(describeDatabase(TWO_HOSTS)).toBe('db1:5432,db2:6543/tracklet')
    expect(describeStore(TWO_HOSTS)).toBe('postgres store at db1:5432,db2:6543/tracklet')
    expect(redact(`failed at ${TWO_HOSTS} with s3cr@t`, TWO_HOSTS)).toBe(
      'failed at db1:5432,db2:6543/tracklet with ***',
    )
  })
})

describe('the search for the host that accepts writes', () => {
  const db1: DatabaseHost = { host: 'db1', port: 5432 }
  const db2: DatabaseHost = { host: 'db2', port: 5432 }

  it('takes the first host accepted, in order, and keeps it until a connection to it fails', async () => {
    const accepts = new Set(['db1', 'db2'])
    const probed: string[] = []
    const finder = new PrimaryFinder([db1, db2], async (host) => {
      probed.push(host.host)
      if (!accepts.has(host.host)) throw new Error('it is read-only (a standby)')
    })
    expect(await finder.find()).toBe(db1)
    expect(await finder.find()).toBe(db1)
    expect(probed).toEqual(['db1'])
    // A failover: db1 died, db2 was promoted.
    accepts.delete('db1')
    finder.lost(db1)
    expect(await finder.find()).toBe(db2)
    expect(probed).toEqual(['db1', 'db1', 'db2'])
  })

  it('shares one round of probes between searches that overlap', async () => {
    let probes = 0
    const finder = new PrimaryFinder([db1], async () => {
      probes++
    })
    await Promise.all([finder.find(), finder.find(), finder.find()])
    expect(probes).toBe(1)
  })

  it('fails with each host and its reason while none accepts writes', async () => {
    const finder = new PrimaryFinder([db1, db2], async (host) => {
      throw new Error(host === db1 ? 'connect ECONNREFUSED' : 'it is read-only (a standby)')
    })
    await expect(finder.find()).rejects.toMatchObject({
      code: NO_PRIMARY_CODE,
      message:
        'no database host accepts writes (db1:5432: connect ECONNREFUSED; db2:5432: it is read-only (a standby))',
    })
  })
})
