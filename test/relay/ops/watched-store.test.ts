import { describe, expect, it, vi } from 'vitest'
import { StoreHealth } from '../../../src/relay/ops/health'
import { watchWrites } from '../../../src/relay/ops/watched-store'
import { openSqliteStore } from '../../../src/relay/store/sqlite/sqlite-store'

describe('watchWrites', () => {
  async function setup(error: Error) {
    const store = await openSqliteStore(':memory:')
    vi.spyOn(store, 'enqueue').mockRejectedValue(error)
    const health = new StoreHealth({ probe: async () => {} })
    const close = async (): Promise<void> => {
      health.stop()
      await store.close()
    }
    return { store: watchWrites(store, health), health, close }
  }

  it('does not count data the store refused against health: the store still takes other writes', async () => {
    const refused = Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: '22021' })
    const { store, health, close } = await setup(refused)
    await expect(store.enqueue([])).rejects.toBe(refused)
    expect(health.report()).toEqual({ ok: true })
    await close()
  })

  it('counts a connection or disk failure', async () => {
    const down = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })
    const { store, health, close } = await setup(down)
    await expect(store.enqueue([])).rejects.toBe(down)
    expect(health.report()).toMatchObject({ ok: false, failing: [{ writes: 'deliveries' }] })
    await close()
  })
})
