import { describe, expect, it } from 'vitest'
import { HttpError } from '../../../src/relay/http/http-error'
import { withBatchDefaults } from '../../../src/relay/ingest/batch-defaults'

const library = { name: 'analytics-go', version: '3.3.0' }

describe('withBatchDefaults', () => {
  it("merges the batch's context into each message's, the message's keys winning (library included)", () => {
    const batch = [
      { type: 'track', event: 'a' },
      { type: 'track', event: 'b', context: { ip: '10.0.0.1', locale: 'fr-FR' } },
      { type: 'track', event: 'c', context: { library: { name: 'mine', version: '1' } } },
    ]
    const merged = withBatchDefaults(batch, { batch, context: { library, locale: 'en-US' } })
    expect(merged).toEqual([
      { type: 'track', event: 'a', context: { library, locale: 'en-US' } },
      { type: 'track', event: 'b', context: { library, ip: '10.0.0.1', locale: 'fr-FR' } },
      { type: 'track', event: 'c', context: { library: { name: 'mine', version: '1' }, locale: 'en-US' } },
    ])
  })

  it("merges the batch's integrations under each message's, reading analytics-go's lower-case all", () => {
    const batch = [
      { type: 'track', event: 'a' },
      { type: 'track', event: 'b', integrations: { Webhooks: true } },
      { type: 'track', event: 'c', integrations: { All: true } },
    ]
    expect(withBatchDefaults(batch, { batch, integrations: { all: false, Mixpanel: true } })).toEqual([
      { type: 'track', event: 'a', integrations: { all: false, Mixpanel: true } },
      { type: 'track', event: 'b', integrations: { all: false, Mixpanel: true, Webhooks: true } },
      { type: 'track', event: 'c', integrations: { Mixpanel: true, All: true } },
    ])
  })

  it('never changes the messages given, and returns them as they are without batch defaults', () => {
    const message = { type: 'identify', userId: 'u', context: { ip: '1.2.3.4' } }
    const batch = [message]
    expect(withBatchDefaults(batch, { batch })).toBe(batch)
    expect(withBatchDefaults(batch, { batch, context: null })).toBe(batch)
    withBatchDefaults(batch, { batch, context: { library }, integrations: { All: false } })
    expect(message).toEqual({ type: 'identify', userId: 'u', context: { ip: '1.2.3.4' } })
  })

  it('leaves messages that are not objects, or carry a context or integrations that is not one, for validation', () => {
    const batch = [42, { type: 'track', event: 'a', context: 'x', integrations: [] }]
    expect(withBatchDefaults(batch, { batch, context: { library }, integrations: { All: false } })).toEqual(batch)
  })

  it.each([
    [{ context: 'go' }, 'the batch\'s context must be an object, got "go"'],
    [{ context: [] }, "the batch's context must be an object, got an array"],
    [
      { integrations: { Webhooks: 'yes' } },
      'the batch\'s integrations.Webhooks must be true, false or an object of options, got "yes"',
    ],
  ])('refuses the batch, with 400 and a clear reason, for %o', (defaults, reason) => {
    const batch = [{ type: 'track', userId: 'u', event: 'a' }]
    let error: unknown
    try {
      withBatchDefaults(batch, { batch, ...defaults })
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(HttpError)
    expect(error).toMatchObject({ status: 400, code: 'ERR_INVALID_BODY', message: reason })
  })
})
