import { afterEach, describe, expect, it } from 'vitest'
import type { Notifications } from '../../../src/relay/store/notifications/channel'
import { openNotifications } from '../../../src/relay/store/notifications/open'
import { sql } from '../../support/postgres'
import { waitFor } from '../../support/wait-for'
import { STORE_KINDS, throwawayDatabase } from '../../support/stores'

const opened: Notifications[] = []
afterEach(async () => {
  for (const channel of opened.splice(0)) await channel.close()
})

function open(database: string): Notifications {
  const channel = openNotifications(database)
  opened.push(channel)
  return channel
}

// The one notification channel per relay that configuration changes and the live view will share
// (docs/maintainers.md, "Seams").
describe.each(STORE_KINDS)('the notification channel of the %s store', (kind) => {
  it('brings each payload sent on a topic to its listeners, until they stop', async () => {
    const channel = open(await throwawayDatabase(kind))
    const heard: string[] = []
    const other: string[] = []
    const stop = await channel.listen('sources', (payload) => heard.push(payload))
    await channel.listen('live', (payload) => other.push(payload))
    await channel.notify('sources', 'changed: web')
    await waitFor(() => heard.length === 1 || undefined, 'heard to hear 1')
    expect(heard).toEqual(['changed: web'])
    await stop()
    await channel.notify('sources', 'changed again')
    await channel.notify('live', 'after')
    await waitFor(() => other.length === 1 || undefined, 'other to hear 1')
    expect(heard).toEqual(['changed: web'])
  })

  it('sends several payloads at once, in their order', async () => {
    const channel = open(await throwawayDatabase(kind))
    const heard: string[] = []
    await channel.listen('live', (payload) => heard.push(payload))
    const payloads = Array.from({ length: 30 }, (_, i) => `batch ${i}: ${'x'.repeat(7_000)}`)
    await channel.notifyAll('live', payloads)
    await channel.notifyAll('live', [])
    await waitFor(() => heard.length === 30 || undefined, 'all 30 payloads')
    expect(heard).toEqual(payloads)
  })
})

describe('on PostgreSQL', () => {
  it('reaches the listeners of every relay on the database', async () => {
    const database = await throwawayDatabase('postgres')
    const [first, second] = [open(database), open(database)]
    const heard: string[] = []
    await second.listen('sources', (payload) => heard.push(`second: ${payload}`))
    await first.listen('sources', (payload) => heard.push(`first: ${payload}`))
    await first.notify('sources', 'changed')
    await waitFor(() => heard.length === 2 || undefined, 'heard to hear 2')
    expect(heard.sort()).toEqual(['first: changed', 'second: changed'])
  })

  it('opens a lost connection again by itself while it listens, and hears what is sent after', async () => {
    const database = await throwawayDatabase('postgres')
    const [listener, sender] = [open(database), open(database)]
    const heard: string[] = []
    await listener.listen('sources', (payload) => heard.push(payload))
    // The server ends every notification connection on this database but the sender's (not open yet).
    await sql(
      database,
      // Only this test's database: the server is shared with the files running beside this one.
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
       WHERE application_name = 'tracklet-relay-notifications' AND datname = current_database()`,
    )
    // Nobody uses the listener's channel: it must come back on its own to hear this.
    await waitFor(
      async () => {
        await sender.notify('sources', 'after the loss')
        return heard.includes('after the loss') || undefined
      },
      'the listener to hear again',
      20_000,
    )
  })
})
