import { describe, expect, it } from 'vitest'
import { IdleSignal } from '../../../src/relay/delivery/idle'

describe('the idle signal', () => {
  it('resolves at once when already idle, and otherwise on the first check that finds it idle', async () => {
    let idle = true
    const signal = new IdleSignal(() => idle)
    await expect(signal.wait()).resolves.toBeUndefined()
    idle = false
    let resolved = 0
    void signal.wait().then(() => resolved++)
    void signal.wait().then(() => resolved++)
    signal.check()
    await Promise.resolve()
    expect(resolved).toBe(0)
    idle = true
    signal.check()
    await new Promise((resolve) => setImmediate(resolve))
    expect(resolved).toBe(2)
  })
})
