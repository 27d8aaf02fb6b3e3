import { afterEach, describe, expect, it, vi } from 'vitest'
import { createRelay, type Relay, RelayConfigError } from '../../../src/relay/index'
import { STORE_KINDS, throwawayDatabase } from '../../support/stores'
import { ADMIN_TOKEN, adminGet, post, track, waitFor, WRITE_KEY } from '../helpers'
import { recorded } from './recorder'

// The registry is the one list of destinations: the tests' second destination joins it by one line.
vi.mock('../../../src/relay/destinations/index', async (original) => {
  const real = await original<typeof import('../../../src/relay/destinations/index')>()
  const { recorder: second } = await import('./recorder')
  return { DESTINATIONS: [...real.DESTINATIONS, second] }
})

describe.each(STORE_KINDS)('a second destination, through the interface only (%s)', (kind) => {
  let relay: Relay | undefined
  afterEach(async () => {
    await relay?.close()
    relay = undefined
    recorded.reset()
  })

  const start = async (settings: unknown) => {
    relay = await createRelay({
      port: 0,
      database: await throwawayDatabase(kind),
      adminToken: ADMIN_TOKEN,
      // One slot per source: the batch's first delivery holds it, the others join without one.
      concurrency: 1,
      sources: [{ name: 'web', writeKey: WRITE_KEY, destinations: { Recorder: settings as object } }],
    })
    return relay
  }

  it('is configured by its name, its settings checked with every problem named by its path', async () => {
    const error = await start({ maxMessages: 0 }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(RelayConfigError)
    expect((error as RelayConfigError).problems.map((p) => p.field)).toEqual([
      'sources[0].destinations.Recorder.maxMessages',
      'sources[0].destinations.Recorder.maxWaitMs',
    ])
  })

  it('gets the due deliveries gathered into batches of at most maxMessages, each settled by its own outcome', async () => {
    const { url } = await start({ maxMessages: 3, maxWaitMs: 200 })
    // The second message of each batch is refused for good; the others are delivered.
    recorded.answer = (batch) =>
      batch.map((m, i) =>
        i === 1 ? { kind: 'failed', retryable: false, error: `refused ${m.message.messageId}` } : { kind: 'delivered' },
      )
    const messages = Array.from({ length: 7 }, (_, i) => track({ messageId: `r${i}` }))
    expect((await post(`${url}/v1/batch`, { batch: messages })).status).toBe(200)
    await waitFor(() => recorded.batches.flat().length === 7 || undefined, 'seven messages recorded')
    expect(recorded.batches.every((b) => b.length <= 3)).toBe(true)
    // Gathered: fewer batches than messages.
    expect(recorded.batches.length).toBeLessThan(7)
    const refused = recorded.batches.filter((b) => b.length > 1).map((b) => b[1]!.message.messageId)
    const log = await waitFor(async () => {
      const { body } = await adminGet(`${url}/v1/deliveries`)
      const settled = (body.deliveries as { status: string }[]).filter((d) => d.status !== 'pending')
      return settled.length === 7 ? body.deliveries : undefined
    }, 'seven settled deliveries')
    const failed = (log as { status: string; messageId: string; destination: string }[])
      .filter((d) => d.status === 'failed')
      .map((d) => d.messageId)
    expect(failed.sort()).toEqual(refused.sort())
    expect(new Set(log.map((d: { destination: string }) => d.destination))).toEqual(new Set(['Recorder']))
    for (const batch of recorded.batches) for (const m of batch) expect(m.source).toBe('web')
  })
})
