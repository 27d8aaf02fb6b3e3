import { afterEach, describe, expect, it } from 'vitest'
import { SuppressionFollower } from '../../../src/relay/features/privacy/suppression-follower'
import { PostgresNotifications } from '../../../src/relay/store/notifications/postgres'
import type { Store } from '../../../src/relay/store/store'
import type { AuditRecord } from '../../../src/relay/store/source-configs'
import { freshPostgresDatabase } from '../../support/postgres'
import { openTestStore } from '../../support/stores'
import { waitFor } from '../helpers'

const audit = (userId: string): AuditRecord => ({
  at: 1,
  actor: 'admin',
  action: 'suppression.added',
  target: userId,
  changes: '{}',
})

// Two relays' followers on one PostgreSQL database, whose poll would take an hour: only the
// notification can carry the change.
describe('following the suppressions by notification (postgres)', () => {
  const closing: (() => Promise<void>)[] = []
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close()
  })

  async function follower(url: string): Promise<{ store: Store; follower: SuppressionFollower }> {
    const store = await openTestStore('postgres', undefined, url)
    const notifications = new PostgresNotifications(url)
    const follower = new SuppressionFollower({ store: store.suppressions, notifications, pollMs: 3_600_000 })
    await follower.start()
    closing.push(
      () => store.close(),
      () => notifications.close(),
      () => follower.stop(),
    )
    return { store, follower }
  }

  it('applies a change made through one relay on the other', async () => {
    const url = await freshPostgresDatabase()
    const a = await follower(url)
    const b = await follower(url)
    await a.store.suppressions.add({ userIds: ['u1'], source: 'web', at: 1, audit })
    await a.follower.changed()
    expect(a.follower.current().has('u1', 'web')).toBe(true)
    await waitFor(() => (b.follower.current().has('u1', 'web') ? true : undefined), 'the other follower')
    expect(b.follower.current().has('u1', 'shop')).toBe(false)
  })
})
