import { afterEach, describe, expect, it, vi } from 'vitest'
import { debugEnables } from '../../src/sdk/platform/log.web'

// The fetch build's log (src/sdk/platform/log.web.ts) reads DEBUG as debug does, without debug:
// debug reads process.env.DEBUG as it loads, which Deno refuses without --allow-env
// (test/runtimes runs Deno without it).

describe("the fetch build's DEBUG", () => {
  afterEach(() => {
    vi.unstubAllGlobals()
    vi.resetModules()
  })

  it.each([
    [undefined, false],
    ['', false],
    ['analytics', true],
    ['*', true],
    ['analy*', true],
    ['express:*,analytics', true],
    ['express:*', false],
    ['analyticsX', false],
    ['*,-analytics', false],
    ['-analytics,analytics', true],
  ])('%j enables the log: %s', (setting, enabled) => {
    expect(debugEnables(setting)).toBe(enabled)
  })

  it('on Deno, reads DEBUG only where the env permission is granted, and never asks', async () => {
    const querySync = vi.fn(() => ({ state: 'prompt' }))
    const env = new Proxy({} as Record<string, string>, {
      get: () => {
        throw new Error('NotCapable: Requires env access to "DEBUG"')
      },
    })
    vi.stubGlobal('Deno', { permissions: { querySync } })
    vi.stubGlobal('process', { ...process, env })
    const { log } = await import('../../src/sdk/platform/log.web')
    expect(log.enabled).toBe(false)
    expect(querySync).toHaveBeenCalledWith({ name: 'env', variable: 'DEBUG' })
  })

  it('writes to console.debug when DEBUG names it', async () => {
    vi.stubGlobal('process', { ...process, env: { DEBUG: 'analytics' } })
    const debug = vi.spyOn(console, 'debug').mockImplementation(() => {})
    const { log } = await import('../../src/sdk/platform/log.web')
    expect(log.enabled).toBe(true)
    log('flush: %d messages', 3)
    expect(debug).toHaveBeenCalledWith('analytics flush: %d messages', 3)
  })
})
