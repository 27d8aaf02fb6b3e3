import { afterEach, describe, expect, it } from 'vitest'
import type { Store } from '../../../src/relay/store/store'
import type { AuditRecord } from '../../../src/relay/store/source-configs'
import { openTestStore, STORE_KINDS } from '../../support/stores'

// The store part of suppressions (docs/privacy.md): the same behaviour on both stores.

describe.each(STORE_KINDS)('suppressions in the store (%s)', (kind) => {
  let store: Store
  afterEach(async () => {
    await store?.close()
  })

  const added = (userId: string): AuditRecord => ({
    at: 1000,
    actor: 'admin',
    action: 'suppression.added',
    target: userId,
    changes: '{}',
  })
  const removed =
    (userId: string) =>
    (source: string | undefined): AuditRecord => ({
      at: 2000,
      actor: 'admin',
      action: 'suppression.removed',
      target: userId,
      changes: JSON.stringify({ source: source ?? null }),
    })

  it('adds each user once per scope, audits each one added, and bumps the version only on a change', async () => {
    store = await openTestStore(kind)
    const s = store.suppressions
    const before = await s.version()
    const first = await s.add({ userIds: ['u1', 'u2', 'u1'], source: undefined, at: 1000, audit: added })
    expect(first.changed).toBe(2)
    expect(first.version).toBeGreaterThan(before)
    const again = await s.add({ userIds: ['u1'], source: undefined, at: 1500, audit: added })
    expect(again).toEqual({ changed: 0, version: first.version })
    await s.add({ userIds: ['u1'], source: 'web', at: 1600, audit: added })
    expect(await s.list()).toEqual([
      { userId: 'u1', at: 1000 },
      { userId: 'u2', at: 1000 },
      { userId: 'u1', source: 'web', at: 1600 },
    ])
    const audit = await store.sourceConfigs.audit({ limit: 10 })
    expect(audit.map((e) => [e.action, e.target])).toEqual([
      ['suppression.added', 'u1'],
      ['suppression.added', 'u2'],
      ['suppression.added', 'u1'],
    ])
  })

  it('lifts one scope, or every suppression of a user, auditing each', async () => {
    store = await openTestStore(kind)
    const s = store.suppressions
    await s.add({ userIds: ['u1'], source: undefined, at: 1000, audit: added })
    await s.add({ userIds: ['u1'], source: 'web', at: 1000, audit: added })
    await s.add({ userIds: ['u1', 'u2'], source: 'shop', at: 1000, audit: added })
    expect((await s.remove({ userId: 'u1', source: 'web', audit: removed('u1') })).changed).toBe(1)
    expect((await s.remove({ userId: 'u1', source: 'web', audit: removed('u1') })).changed).toBe(0)
    expect((await s.remove({ userId: 'u1', source: undefined, audit: removed('u1') })).changed).toBe(2)
    expect(await s.list()).toEqual([{ userId: 'u2', source: 'shop', at: 1000 }])
    const audit = await store.sourceConfigs.audit({ limit: 2 })
    expect(audit.map((e) => JSON.parse(e.changes).source).sort()).toEqual([null, 'shop'])
  })

  it('writes 5,000 ids in one call', async () => {
    store = await openTestStore(kind)
    const userIds = Array.from({ length: 5000 }, (_, i) => `user-${i}`)
    const { changed } = await store.suppressions.add({ userIds, source: 'web', at: 1, audit: added })
    expect(changed).toBe(5000)
    expect((await store.suppressions.list()).length).toBe(5000)
  })
})
