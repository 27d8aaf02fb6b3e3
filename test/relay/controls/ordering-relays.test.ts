import type { ServerResponse } from 'node:http'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import type { Relay } from '../../../src/relay/index'
import { useCli } from '../../support/cli-process'
import { freshPostgresDatabase } from '../../support/postgres'
import { newDatabase, STORE_KINDS, type StoreKind } from '../../support/stores'
import { ADMIN_TOKEN, adminGet, post, startRelay, track, WRITE_KEY, waitFor } from '../helpers'
import { type CountingReceiver, countingReceiver } from './receiver'
import { interleaved, inversions } from './ordering-support'

// Ordered delivery held by the store, not by one relay's memory (docs/delivery-controls.md,
// "Ordering"): two relays on one PostgreSQL, and a relay killed (SIGKILL) mid-stream, then started
// again on its store. Each counts the inversions a receiver saw: none.

const dir = mkdtempSync(join(tmpdir(), 'tracklet-ordering-'))
const closing: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close()
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const cli = useCli()

const ordered = (url: string) => ({ Webhooks: { webhooks: [{ url }], ordered: true } })

async function receiverFor(): Promise<CountingReceiver> {
  const receiver = await countingReceiver()
  closing.push(() => receiver.close())
  return receiver
}

const batchOf = (messages: { id: string; user: string }[]) => ({
  batch: messages.map(({ id, user }) => track({ messageId: id, userId: user })),
})

// A generous bound: a fresh database, two relays starting and each user's line through retries
// took about 3 s on a quiet machine and went past 20 s once in CI, three test files at a time.
const DELIVERED_WITHIN_MS = 45_000
const TEST_BUDGET_MS = 90_000

async function deliveredCount(url: string): Promise<number> {
  const { body } = await adminGet(`${url}/v1/deliveries?status=delivered&limit=500`)
  return body.deliveries.length
}

it(
  'two relays on one PostgreSQL: each user in order through retries, 0 inversions',
  async () => {
    const receiver = await receiverFor()
    // The first request of one message in four fails: retried after a back-off of about a second.
    const failedOnce = new Set<string>()
    receiver.respond((_req, res, index) => {
      const id = receiver.ids[index]!
      const fails = Number(id.split('-').at(-1)) % 4 === 1 && !failedOnce.has(id)
      if (fails) failedOnce.add(id)
      res.writeHead(fails ? 500 : 200).end()
    })
    const database = await freshPostgresDatabase()
    const sources = [{ name: 'web', writeKey: WRITE_KEY, destinations: ordered(receiver.url) }]
    const relays: Relay[] = []
    for (let i = 0; i < 2; i++) {
      const relay = await startRelay(receiver.url, { database, sources }, 'postgres')
      closing.push(() => relay.close())
      relays.push(relay)
    }
    const sent = interleaved('two', 4, 6)
    // One batch after the other, to each relay in turn: the order received.
    for (let i = 0; i < sent.length; i += 4) {
      expect((await post(`${relays[(i / 4) % 2]!.url}/v1/batch`, batchOf(sent.slice(i, i + 4)))).status).toBe(200)
    }
    await waitFor(
      async () => ((await deliveredCount(relays[0]!.url)) === sent.length ? true : undefined),
      'every message delivered',
      DELIVERED_WITHIN_MS,
    )
    expect(failedOnce.size).toBeGreaterThan(0)
    expect(inversions(receiver, sent)).toBe(0)
  },
  TEST_BUDGET_MS,
)

describe.each(STORE_KINDS)('a relay killed mid-stream (%s)', (kind: StoreKind) => {
  it(
    'keeps each user in order after a restart on its store: 0 inversions',
    async () => {
      const receiver = await receiverFor()
      // Every request answered a moment later, but for one message, held until the kill: its user's
      // later messages must not go before it, neither before the kill nor after.
      const held: ServerResponse[] = []
      receiver.respond((_req, res, index) => {
        if (receiver.ids[index] === 'kill-1-2' && held.length === 0) held.push(res)
        else setTimeout(() => res.writeHead(200).end(), 2)
      })
      closing.push(async () => {
        for (const res of held) res.destroy()
      })
      const config = join(dir, `${kind}.json`)
      writeFileSync(
        config,
        JSON.stringify({
          port: 0,
          database: await newDatabase(kind, dir, `${kind}-kill.db`),
          adminToken: ADMIN_TOKEN,
          allowPrivateNetworks: true,
          // A killed relay's leases run out soon (on PostgreSQL; SQLite's next start voids them).
          leaseTimeout: 1000,
          sources: [{ name: 'web', writeKey: WRITE_KEY, destinations: ordered(receiver.url) }],
        }),
      )
      const sent = interleaved('kill', 3, 10)
      const first = await cli.startRelay(['--config', config])
      for (let i = 0; i < sent.length; i += 10) {
        expect((await post(`${first.url}/v1/batch`, batchOf(sent.slice(i, i + 10)))).status).toBe(200)
      }
      await waitFor(() => (held.length > 0 && receiver.ids.length >= 10 ? true : undefined), 'the stream under way')
      first.child.kill('SIGKILL')
      await first.exited
      const before = receiver.ids.length

      const second = await cli.startRelay(['--config', config])
      await waitFor(
        async () => ((await deliveredCount(second.url)) === sent.length ? true : undefined),
        'every message delivered after the restart',
        20_000,
      )
      // The held message went again after the restart (at least once), and before its user's next.
      expect(receiver.ids.slice(before)).toContain('kill-1-2')
      expect(inversions(receiver, sent)).toBe(0)
      second.child.kill('SIGTERM')
      await second.exited
    },
    TEST_BUDGET_MS,
  )
})
