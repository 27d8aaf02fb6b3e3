import { afterEach, describe, expect, it } from 'vitest'
import { WEBHOOKS_DESTINATION } from '../../../src/relay/config/sources'
import { validateRelayOptions } from '../../../src/relay/config/validate'
import { ReloadableFunctions } from '../../../src/relay/features/functions/reloadable'

// The API sources' functions as a relay holds them (docs/functions.md, "Through the admin API"):
// what an attempt calls while one compiles, after one fails to compile here, and once one is gone.

const tagging = (tag: string) => `function onTrack(event) { event.properties = { tag: '${tag}' }; return event }`
const message = { type: 'track', event: 'Signed Up', userId: 'u1', messageId: 'm1' }

describe('the API sources’ functions of a relay', () => {
  let functions: ReloadableFunctions | undefined
  afterEach(async () => {
    await functions?.close()
    functions = undefined
  })

  const start = async () => {
    functions = await ReloadableFunctions.load(validateRelayOptions({ sources: [] }))
    return functions
  }
  const callOf = (source: string) => functions!.bySource.get(source)?.get(WEBHOOKS_DESTINATION)

  it('makes an attempt that comes while the function compiles wait for it, never skip it', async () => {
    const fns = await start()
    const compiled = fns.applyApi([{ source: 'shop', code: tagging('v1'), settings: {} }])
    // In the map at once, before it compiled: this call waits for the sandbox.
    const result = await callOf('shop')!.call(message)
    expect(result).toMatchObject({ kind: 'event', event: { properties: { tag: 'v1' } } })
    expect(await compiled).toEqual([])
  })

  it('keeps the function it had when the new code does not compile here, and says which source', async () => {
    const fns = await start()
    await fns.applyApi([{ source: 'shop', code: tagging('v1'), settings: {} }])
    const problems = await fns.applyApi([{ source: 'shop', code: 'function onTrack(e) {', settings: {} }])
    expect(problems).toEqual([{ source: 'shop', message: expect.stringMatching(/^SyntaxError/) }])
    expect(await callOf('shop')!.call(message)).toMatchObject({ kind: 'event', event: { properties: { tag: 'v1' } } })
  })

  it('retries the deliveries of a source whose first function does not compile here', async () => {
    const fns = await start()
    const problems = await fns.applyApi([{ source: 'shop', code: 'onTrack = (', settings: {} }])
    expect(problems).toHaveLength(1)
    expect(await callOf('shop')!.call(message)).toMatchObject({
      kind: 'retry',
      message: expect.stringContaining('the function of source "shop" does not compile on this relay: SyntaxError'),
    })
  })

  it('closes the function of a source deleted (or whose function was removed), and recompiles only what changed', async () => {
    const fns = await start()
    await fns.applyApi([
      { source: 'shop', code: tagging('v1'), settings: {} },
      { source: 'blog', code: tagging('b1'), settings: {} },
    ])
    const shop = callOf('shop')!
    const blog = callOf('blog')!
    await fns.applyApi([{ source: 'blog', code: tagging('b1'), settings: {} }])
    expect(callOf('shop')).toBeUndefined()
    // The caller an attempt held when it was removed: its sandbox is closed.
    await expect.poll(async () => (await shop.call(message)).kind).toBe('error')
    expect(await shop.call(message)).toMatchObject({ message: expect.stringContaining('closed') })
    // blog's function did not change: the same one, still running.
    expect(callOf('blog')).toBe(blog)
    expect(await blog.call(message)).toMatchObject({ kind: 'event', event: { properties: { tag: 'b1' } } })
  })
})
