import { randomUUID } from 'node:crypto'
import { expect, it } from 'vitest'
import { freshPostgresDatabase, sql } from '../../support/postgres'
import { openTestStore } from '../../support/stores'

// A claim rewrites each queue row it leases. The new version stays on the row's page only when the
// page has room; one that moves takes a new entry in every index of the queue (and more WAL and
// server time for each delivery: docs/postgres.md). A burst of retries (a receiver that failed a
// burst's first attempts: their queue rows written at once) fills whole pages, so the queue's pages
// are left with room for every row's claim.
it('leaves room on every queue page for the claims of a burst: no claimed row moves to another page', async () => {
  const url = await freshPostgresDatabase()
  const store = await openTestStore('postgres', Date.now, url)
  try {
    const burst = Array.from({ length: 400 }, () => {
      const messageId = randomUUID()
      const json = JSON.stringify({ type: 'track', messageId, userId: 'u', event: 'Order Completed' })
      return { source: 'web', destination: 'Webhooks', messageId, type: 'track', json }
    })
    expect(await store.enqueue(burst)).toBe(400)
    const first = await store.claim({ source: 'web', limit: 400, owner: 'relay-a', leaseMs: 60_000 })
    await store.record(
      first.map((d) => ({
        id: d.id,
        at: Date.now(),
        requests: [{ url: 'https://hooks.example/in', status: 503, ms: 5 }],
        next: { status: 'pending' as const, nextAttemptAt: Date.now() - 1000, error: 'HTTP 503' },
      })),
    )
    const pages = async () =>
      new Map(
        (await sql<{ id: string; page: string }>(url, 'SELECT id, (ctid::text::point)[0] AS page FROM queue')).map(
          (row) => [row.id, row.page],
        ),
      )
    const before = await pages()
    expect(new Set(before.values()).size).toBeGreaterThan(1)
    let claimed = 0
    for (let round = 0; round < 10 && claimed < 400; round++) {
      claimed += (await store.claim({ source: 'web', limit: 100, owner: 'relay-a', leaseMs: 60_000 })).length
    }
    expect(claimed).toBe(400)
    const after = await pages()
    const moved = [...before].filter(([id, page]) => after.get(id) !== page)
    expect(moved).toEqual([])
  } finally {
    await store.close()
  }
})
