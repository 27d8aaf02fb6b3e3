import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { Archive } from '../../../src/relay/destinations/archive/module'
import { parseArchiveSettings } from '../../../src/relay/destinations/archive/settings'
import { createRelay, type Relay } from '../../../src/relay/index'
import { STORE_KINDS, type StoreKind, throwawayDatabase } from '../../support/stores'
import { outbound, S3RVER_KEYS, startS3, tempFolder } from '../archive/support'
import { openStream } from '../live/stream/stream-client'
import { ADMIN_TOKEN, admin, adminGet, post, type Receiver, startReceiver, waitFor, WRITE_KEY } from '../helpers'

// Replays from the archive (docs/replay.md, "From the archive") on a real relay: files written
// months ago by an archive, read back by the window's day and hour, sent to a URL no source lists.

const PATH = 'sources[0].destinations.Archive'
const DAY = { since: '2025-10-01T00:00:00.000Z', until: '2025-10-01T23:59:59.999Z' }
const SECRET = 'shared-secret-for-tests'

/** Writes `count` messages of `web`, one every 5 minutes from 2025-10-01T08:00Z, as an archive does. */
async function writeOldFiles(settings: unknown, count: number): Promise<void> {
  const sender = Archive.create(parseArchiveSettings(settings, PATH), { source: 'web', relayId: 'old' })
  const start = Date.parse('2025-10-01T08:00:00.000Z')
  const batch = Array.from({ length: count }, (_, i) => outbound(i + 1, new Date(start + i * 300_000).toISOString()))
  const outcomes = await sender.sendBatch(batch)
  expect(outcomes.every((o) => o.kind === 'delivered')).toBe(true)
  // One of the day before, outside the window.
  await sender.sendBatch([outbound(1000, '2025-09-30T23:00:00.000Z')])
  await sender.close()
}

async function archiveRelay(kind: StoreKind, archive: unknown, live: Receiver): Promise<Relay> {
  return createRelay({
    port: 0,
    database: await throwawayDatabase(kind),
    adminToken: ADMIN_TOKEN,
    allowPrivateNetworks: true,
    sources: [
      {
        name: 'web',
        writeKey: WRITE_KEY,
        destinations: {
          Archive: archive as object,
          Webhooks: { webhooks: [{ url: live.url, headers: { 'x-live-only': 'k' } }], sharedSecret: SECRET },
        },
      },
    ],
  })
}

async function replayDay(relay: Relay, receiver: Receiver, count: number, erased: string): Promise<void> {
  // Listed by day and hour: 36 messages every 5 minutes are 3 hours' files.
  const listing = await adminGet(`${relay.url}/v1/archive?source=web&since=${DAY.since}&until=${DAY.until}`)
  expect(listing.status).toBe(200)
  expect(listing.body.files.map((f: { key: string }) => f.key.replace(/^.*source=/, ''))).toEqual([
    'web/date=2025-10-01/hour=08/old-1-12.ndjson.gz',
    'web/date=2025-10-01/hour=09/old-13-24.ndjson.gz',
    'web/date=2025-10-01/hour=10/old-25-36.ndjson.gz',
  ])
  expect(listing.body.files.reduce((n: number, f: { messages: number }) => n + f.messages, 0)).toBe(count)

  // Erased before the replay: its messages are in the files still, and never sent again.
  expect((await post(`${relay.url}/v1/deletions`, { userId: erased }, admin)).status).toBe(202)

  const stream = await openStream(relay.url, 'kinds=attempt')
  const body = { from: 'archive', filter: { source: 'web', since: DAY.since }, to: { url: receiver.url } }
  // `until` defaults to now: the whole archive since the day's start.
  const dry = await post(`${relay.url}/v1/replays`, { ...body, dryRun: true }, admin)
  expect(dry).toEqual({ status: 200, body: { matched: count } })
  const started = await post(`${relay.url}/v1/replays`, { ...body, ratePerSecond: 1000 }, admin)
  expect(started.status).toBe(202)
  const kept = Array.from({ length: count }, (_, i) => outbound(i + 1, DAY.since).message).filter(
    (m) => m.userId !== erased,
  )
  const done = await waitFor(async () => {
    const { body: replay } = await adminGet(`${relay.url}/v1/replays/${started.body.id}`)
    return replay.state === 'done' && replay.delivered === kept.length ? replay : undefined
  }, 'the replay from the archive delivered')
  expect(done).toMatchObject({ from: 'archive', matched: count, queued: kept.length, failed: 0 })
  // Each copy's attempt is in the live stream, marked with its replay.
  const seen = await stream.next((e) => e.data.replay === started.body.id, "a replay copy's attempt")
  expect(seen.data).toMatchObject({ source: 'web', url: receiver.url, outcome: 'delivered' })
  stream.close()
  const ids = receiver.received.map((r) => r.body['messageId'])
  expect(ids.sort()).toEqual(kept.map((m) => m.messageId).sort())
  expect(receiver.received.some((r) => r.body['userId'] === erased)).toBe(false)
  // Signed with the source's secret, without its URLs' own headers.
  for (const { headers } of receiver.received) {
    expect(headers['x-signature']).toMatch(/^[0-9a-f]{40}$/)
    expect(headers['x-live-only']).toBeUndefined()
  }
  // Counted apart from live delivery.
  const metrics = await fetch(`${relay.url}/metrics`, { headers: admin })
  expect(await metrics.text()).toContain(
    `tracklet_replay_copies_total{source="web",outcome="delivered"} ${kept.length}`,
  )
}

describe.each(STORE_KINDS)('a replay from a folder archive (%s)', (kind: StoreKind) => {
  const closing: (() => Promise<void>)[] = []
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close()
  })

  it('sends a day months old to a new URL, read by its hours, skipping an erased user', async () => {
    const folder = await tempFolder()
    const live = await startReceiver()
    const receiver = await startReceiver()
    closing.push(folder.remove, live.close, receiver.close)
    const archive = { url: `file://${join(folder.path, 'archive')}` }
    await writeOldFiles(archive, 36)
    const relay = await archiveRelay(kind, archive, live)
    closing.push(() => relay.close())
    await replayDay(relay, receiver, 36, 'u-1')
    // The live receiver got only the erasure's delete message.
    expect(live.received.map((r) => r.body['type'])).toEqual(['delete'])
  })

  it('refuses what a replay from the archive cannot do, naming each problem', async () => {
    const folder = await tempFolder()
    const live = await startReceiver()
    closing.push(folder.remove, live.close)
    const relay = await archiveRelay(kind, { url: `file://${folder.path}` }, live)
    closing.push(() => relay.close())
    const refused = await post(
      `${relay.url}/v1/replays`,
      { from: 'archive', filter: { source: 'app', status: 'failed', since: '30d' } },
      admin,
    )
    expect(refused.status).toBe(400)
    expect(refused.body.error.message).toContain("filter.status is the outbox's")
    expect(refused.body.error.message).toContain('filter.source must name a source with an Archive ("web")')
    const wrong = await post(`${relay.url}/v1/replays`, { from: 'files', filter: { since: '1d' } }, admin)
    expect(wrong.body.error.message).toContain('from must be one of "outbox", "archive"')
    const listing = await adminGet(`${relay.url}/v1/archive?source=app`)
    expect(listing.status).toBe(400)
    expect(listing.body.error.message).toContain('since is required')
    // A private address is refused unless allowPrivateNetworks (this relay allows them).
    const noUrl = await post(
      `${relay.url}/v1/replays`,
      { from: 'archive', filter: { since: '1d' }, to: { url: 'ftp://x' } },
      admin,
    )
    expect(noUrl.body.error.message).toContain('to.url needs filter.source')
  })
})

describe('a replay from an S3-compatible archive (s3rver)', () => {
  it('reads the window from the bucket and sends it', async () => {
    const s3 = await startS3()
    const live = await startReceiver()
    const receiver = await startReceiver()
    const archive = {
      url: 's3://archive/events',
      s3: { region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, ...S3RVER_KEYS },
    }
    let relay: Relay | undefined
    try {
      await writeOldFiles(archive, 36)
      relay = await archiveRelay('sqlite', archive, live)
      await replayDay(relay, receiver, 36, 'u-2')
    } finally {
      await relay?.close()
      await receiver.close()
      await live.close()
      await s3.stop()
    }
  }, 60_000)
})
