import pg from 'pg'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Relay } from '../../../../src/relay/index'
import { STREAM_TOPIC } from '../../../../src/relay/features/live/stream/fan-in'
import { freshPostgresDatabase } from '../../../support/postgres'
import { post, type Receiver, startReceiver, startRelay, track } from '../../helpers'
import { openStream, type StreamReader } from './stream-client'

// Two relays on one PostgreSQL database: what relay B does reaches relay A's readers (docs/operations.md,
// "The live stream"), through each relay's one notification connection.

let receiver: Receiver
let database: string
let relayA: Relay
let relayB: Relay
const readers: StreamReader[] = []
const clients: pg.Client[] = []

beforeEach(async () => {
  receiver = await startReceiver()
  database = await freshPostgresDatabase()
  relayA = await startRelay(receiver.url, { database }, 'postgres')
  relayB = await startRelay(receiver.url, { database }, 'postgres')
})
afterEach(async () => {
  for (const reader of readers.splice(0)) reader.close()
  for (const client of clients.splice(0)) await client.end()
  await relayA.close()
  await relayB.close()
  await receiver.close()
})

/** Sends messages to relay B until relay A's reader has one: B has then heard of A's reader. */
async function untilFannedIn(reader: StreamReader): Promise<void> {
  for (let i = 0; ; i++) {
    const messageId = `warm-up-${i}`
    await post(`${relayB.url}/v1/track`, track({ messageId }))
    const arrived = await Promise.race([
      reader
        .next((e) => e.kind === 'ingested' && e.data.messageId === messageId, messageId)
        .then(() => true)
        .catch(() => false),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 200)),
    ])
    if (arrived) return
  }
}

/** A connection of the test's own listening to the stream's topic: what the relays send there. */
async function listenToStreamTopic(): Promise<{ payloads: string[]; mark(): Promise<void> }> {
  const client = new pg.Client({ connectionString: database })
  clients.push(client)
  await client.connect()
  const payloads: string[] = []
  const marks: (() => void)[] = []
  client.on('notification', (message) => {
    if (message.payload === 'test-mark') marks.shift()?.()
    else payloads.push(message.payload ?? '')
  })
  await client.query(`LISTEN ${client.escapeIdentifier(STREAM_TOPIC)}`)
  return {
    payloads,
    // Notifications arrive in commit order: once the test's own mark is heard, whatever a relay
    // sent before it has been heard too.
    mark: () =>
      new Promise<void>((resolve) => {
        marks.push(resolve)
        void client.query('SELECT pg_notify($1, $2)', [STREAM_TOPIC, 'test-mark'])
      }),
  }
}

describe('the live stream across relays on one PostgreSQL database', () => {
  it('gives relay A’s reader every message ingested on relay B, and its attempts, in order', async () => {
    const reader = await openStream(relayA.url, 'kinds=ingested,attempt')
    readers.push(reader)
    await untilFannedIn(reader)
    const batch = Array.from({ length: 60 }, (_, i) => track({ messageId: `b-${i}`, userId: `user-${i}` }))
    expect((await post(`${relayB.url}/v1/batch`, { batch })).body.accepted).toBe(60)
    await reader.next((e) => e.kind === 'attempt' && e.data.messageId === 'b-59', 'the last attempt')
    for (let i = 0; i < 60; i++) {
      await reader.next((e) => e.kind === 'attempt' && e.data.messageId === `b-${i}`, `attempt b-${i}`)
    }
    const ingested = reader.events.filter((e) => e.kind === 'ingested' && e.data.messageId.startsWith('b-'))
    // None sampled, none twice, in the order relay B accepted them.
    expect(ingested.map((e) => e.data.messageId)).toEqual(batch.map((m) => m['messageId']))
    expect(ingested[7]!.data).toMatchObject({ source: 'web', type: 'track', userId: 'user-7' })
    expect(reader.events.find((e) => e.kind === 'attempt' && e.data.messageId === 'b-3')!.data).toMatchObject({
      outcome: 'delivered',
      status: 200,
      url: receiver.url,
    })
  })

  it('announces as skipped an event too large for a notification, and goes on', async () => {
    const reader = await openStream(relayA.url, 'kinds=ingested')
    readers.push(reader)
    await untilFannedIn(reader)
    const huge = track({ messageId: 'huge', event: 'E'.repeat(9000) })
    const answer = await post(`${relayB.url}/v1/batch`, { batch: [huge, track({ messageId: 'after-huge' })] })
    expect(answer.body.accepted).toBe(2)
    await reader.next((e) => e.data.messageId === 'after-huge', 'the message after the huge one')
    const skipped = await reader.next((e) => e.kind === 'skipped', 'skipped')
    expect(skipped.data).toEqual({ count: 1 })
    expect(reader.events.some((e) => e.data.messageId === 'huge')).toBe(false)
  })

  it('sends nothing to the other relays while no relay has a reader, and stops when the last reader leaves', async () => {
    const topic = await listenToStreamTopic()
    await post(`${relayB.url}/v1/track`, track({ messageId: 'nobody-reads' }))
    await post(`${relayA.url}/v1/track`, track({ messageId: 'nobody-reads-either' }))
    await topic.mark()
    expect(topic.payloads).toEqual([])

    const reader = await openStream(relayA.url)
    await untilFannedIn(reader)
    await topic.mark()
    expect(topic.payloads.length).toBeGreaterThan(0)

    reader.close()
    // Relay B hears that A's reader left; a message then goes to nobody.
    for (let i = 0; ; i++) {
      topic.payloads.length = 0
      await post(`${relayB.url}/v1/track`, track({ messageId: `after-${i}` }))
      await new Promise((resolve) => setTimeout(resolve, 100))
      await topic.mark()
      if (topic.payloads.length === 0) break
    }
  })
})
