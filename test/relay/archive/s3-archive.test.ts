import { randomBytes } from 'node:crypto'
import { Agent, type Dispatcher } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listArchive } from '../../../src/relay/destinations/archive/listing'
import { Archive } from '../../../src/relay/destinations/archive/module'
import { readArchive } from '../../../src/relay/destinations/archive/reader'
import { S3Store } from '../../../src/relay/destinations/archive/s3-store'
import { ArchiveSender } from '../../../src/relay/destinations/archive/sender'
import { parseArchiveSettings, type S3Location } from '../../../src/relay/destinations/archive/settings'
import { startTcpProxy } from '../../support/tcp-proxy'
import { outbound, S3RVER_KEYS, startS3 } from './support'

const PATH = 'sources[0].destinations.Archive'
const WINDOW = { source: 'web', since: Date.parse('2026-03-01T00:00:00Z'), until: Date.parse('2026-03-02T00:00:00Z') }

/** An undici Agent that notes each request's method and path: what went over the wire. */
class RecordingAgent extends Agent {
  readonly requests: string[] = []
  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    this.requests.push(`${options.method} ${options.path}`)
    return super.dispatch(options, handler)
  }
}

describe('the archive in an S3-compatible bucket (s3rver)', () => {
  let s3: Awaited<ReturnType<typeof startS3>>
  beforeAll(async () => {
    s3 = await startS3()
  })
  afterAll(() => s3.stop())

  const settingsFor = (endpoint: string, prefix: string, keys = S3RVER_KEYS) =>
    parseArchiveSettings(
      { url: `s3://archive/${prefix}`, s3: { region: 'us-east-1', endpoint, forcePathStyle: true, ...keys } },
      PATH,
    )

  it('puts one file per hour, lists it with its meta and reads it back', async () => {
    const settings = settingsFor(s3.endpoint, 'raw/events')
    const sender = Archive.create(settings, { source: 'web', relayId: 'r1' })
    expect(sender.targets).toEqual(['s3://archive/raw/events'])
    const batch = [outbound(1, '2026-03-01T10:05:00.000Z'), outbound(2, '2026-03-01T11:05:00.000Z')]
    expect(await sender.sendBatch(batch)).toEqual([
      {
        kind: 'delivered',
        target: 's3://archive/raw/events',
        detail: {
          file: 'raw/events/source=web/date=2026-03-01/hour=10/r1-1-1.ndjson.gz',
          messages: 1,
          bytes: expect.any(Number),
        },
      },
      {
        kind: 'delivered',
        target: 's3://archive/raw/events',
        detail: {
          file: 'raw/events/source=web/date=2026-03-01/hour=11/r1-2-2.ndjson.gz',
          messages: 1,
          bytes: expect.any(Number),
        },
      },
    ])
    const store = new S3Store(settings.location as S3Location)
    const { files } = await listArchive(store, 'raw/events', { ...WINDOW, since: Date.parse('2026-03-01T11:00:00Z') })
    expect(files).toEqual([
      {
        key: 'raw/events/source=web/date=2026-03-01/hour=11/r1-2-2.ndjson.gz',
        bytes: expect.any(Number),
        messages: 1,
        first: '2026-03-01T11:05:00.000Z',
        last: '2026-03-01T11:05:00.000Z',
      },
    ])
    const read = []
    for await (const record of readArchive(store, 'raw/events', WINDOW)) read.push(record)
    expect(read).toEqual(batch.map(({ message, receivedAt }) => ({ ...message, receivedAt })))
  })

  it('sends a large file as a multipart upload, completed', async () => {
    const settings = settingsFor(s3.endpoint, 'multi')
    const agent = new RecordingAgent()
    const store = new S3Store(settings.location as S3Location, { dispatcher: agent, partBytes: 1024 })
    const sender = new ArchiveSender(settings, { source: 'web', relayId: 'r1', prefix: 'multi', store })
    const batch = Array.from({ length: 50 }, (_, i) =>
      outbound(i + 1, '2026-03-01T10:05:00.000Z', { blob: randomBytes(300).toString('base64') }),
    )
    const outcomes = await sender.sendBatch(batch)
    expect(outcomes.every((outcome) => outcome.kind === 'delivered')).toBe(true)
    expect(agent.requests[0]).toMatch(/^POST .*\?uploads/)
    expect(agent.requests.filter((request) => /^PUT .*partNumber=/.test(request)).length).toBeGreaterThan(10)
    expect(agent.requests.at(-1)).toMatch(/^POST .*uploadId=/)
    const read = []
    for await (const record of readArchive(store, 'multi', WINDOW)) read.push(record.messageId)
    expect(read).toEqual(batch.map(({ message }) => message.messageId))
    await agent.close()
  })

  it('fails retryably while the bucket is down, then writes once it is back: nothing lost', async () => {
    const proxy = await startTcpProxy(Number(new URL(s3.endpoint).port))
    const settings = settingsFor(`http://127.0.0.1:${proxy.port}`, 'flaky')
    const sender = Archive.create(settings, { source: 'web', relayId: 'r1' })
    try {
      await proxy.cut()
      const batch = [outbound(1, '2026-03-01T10:05:00.000Z'), outbound(2, '2026-03-01T10:06:00.000Z')]
      const down = await sender.sendBatch(batch)
      expect(down).toEqual([
        {
          kind: 'failed',
          retryable: true,
          target: 's3://archive/flaky',
          error: expect.stringMatching(/the store is unreachable \(ECONNREFUSED\)/),
        },
        expect.objectContaining({ kind: 'failed', retryable: true }),
      ])
      await proxy.restore()
      expect((await sender.sendBatch(batch)).map((outcome) => outcome.kind)).toEqual(['delivered', 'delivered'])
      const store = new S3Store(settings.location as S3Location)
      const ids = []
      for await (const record of readArchive(store, 'flaky', WINDOW)) ids.push(record.messageId)
      expect(ids).toEqual(['m-1', 'm-2'])
    } finally {
      await proxy.close()
    }
  })

  it('fails a store that refuses with its answer, retryably, and never with the secret', async () => {
    // s3rver checks the key id, not a V4 signature: a key it does not know is refused.
    const keys = { accessKeyId: 'UNKNOWN', secretAccessKey: 'not-the-secret-7f3a' }
    const sender = Archive.create(settingsFor(s3.endpoint, 'refused', keys), { source: 'web', relayId: 'r1' })
    const [outcome] = await sender.sendBatch([outbound(1, '2026-03-01T10:05:00.000Z')])
    expect(outcome).toMatchObject({
      kind: 'failed',
      retryable: true,
      error: expect.stringMatching(/the store answered HTTP 403 InvalidAccessKeyId/),
    })
    expect(JSON.stringify(outcome)).not.toContain(keys.secretAccessKey)
  })
})
