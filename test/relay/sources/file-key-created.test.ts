import { afterEach, describe, expect, it } from 'vitest'
import type { Relay } from '../../../src/relay/index'
import { adminGet, startReceiver, startRelay, WRITE_KEY } from '../helpers'

// A file source's write key is listed with the time this relay loaded it (docs/relay.md, "Sources
// through the API"): the file says nothing of when it was made, and `null` read as "never".
describe("a file source's write key, as GET /v1/sources lists it", () => {
  const closing: (() => Promise<void>)[] = []
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close()
  })

  it('has the time it was loaded, kept across a reload that keeps the key, new with a new key', async () => {
    const receiver = await startReceiver()
    closing.push(() => receiver.close())
    const started = Date.now()
    const relay: Relay = await startRelay(receiver.url)
    closing.push(() => relay.close())
    const createdAt = async (name: string) =>
      (await adminGet(`${relay.url}/v1/sources/${name}`)).body.writeKeys[0].createdAt as string
    const first = await createdAt('web')
    expect(first).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    expect(Date.parse(first)).toBeGreaterThanOrEqual(started)

    const web = { name: 'web', writeKey: WRITE_KEY, destinations: { Webhooks: { webhooks: [{ url: receiver.url }] } } }
    await relay.reload({ sources: [web, { name: 'app', writeKey: 'wk-app' }] })
    expect(await createdAt('web')).toBe(first)
    const app = await createdAt('app')
    expect(Date.parse(app)).toBeGreaterThanOrEqual(Date.parse(first))

    await relay.reload({
      sources: [
        { ...web, writeKey: 'wk-rotated' },
        { name: 'app', writeKey: 'wk-app' },
      ],
    })
    expect(Date.parse(await createdAt('web'))).toBeGreaterThanOrEqual(Date.parse(app))
    expect(await createdAt('app')).toBe(app)
  })
})
