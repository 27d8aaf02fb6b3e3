import { describe, expect, it } from 'vitest'
import { ingestCheckOf, ingestTapOf } from '../../src/relay/features/compose'
import { checkFeatureOrder, type Feature } from '../../src/relay/features/feature'
import type { IngestCheck } from '../../src/relay/ingest/ingest-check'
import type { IngestTap } from '../../src/relay/events/tap'

const source = { name: 'web', destinations: ['Webhooks'] }
const violation = (path: string) => ({ path }) as never

describe('the features composed', () => {
  it('are listed with each dependency before the feature that needs it, each name once', () => {
    expect(() => checkFeatureOrder([{ name: 'a' }, { name: 'b', dependencies: ['a'] }])).not.toThrow()
    expect(() => checkFeatureOrder([{ name: 'b', dependencies: ['a'] }, { name: 'a' }])).toThrow(
      'the feature b needs a listed before it',
    )
    expect(() => checkFeatureOrder([{ name: 'a' }, { name: 'a' }])).toThrow('the feature a is listed twice')
  })

  it("chain their ingest checks in order: each sees the one before's message, the first refusal or block ends it", () => {
    const tagging: IngestCheck = (message) => ({ violations: [violation('a')], message: { ...message, tag: 1 } })
    const seen: unknown[] = []
    const blocking: IngestCheck = (message) => {
      seen.push(message)
      return message['event'] === 'Bad' ? { violations: [violation('b')], blocked: 'bad' } : undefined
    }
    const features: Feature[] = [
      { name: 'one', ingestCheck: tagging },
      { name: 'none' },
      { name: 'two', ingestCheck: blocking },
    ]
    const check = ingestCheckOf(features)!
    expect(check({ event: 'Good' }, source)).toEqual({
      violations: [violation('a')],
      message: { event: 'Good', tag: 1 },
    })
    expect(seen).toEqual([{ event: 'Good', tag: 1 }])
    expect(check({ event: 'Bad' }, source)).toEqual({
      violations: [violation('a'), violation('b')],
      message: { event: 'Bad', tag: 1 },
      blocked: 'bad',
    })
    const refusing: Feature = { name: 'zero', ingestCheck: () => 'no' }
    expect(ingestCheckOf([refusing, ...features])!({ event: 'Good' }, source)).toBe('no')
    expect(ingestCheckOf([{ name: 'none' }])).toBeUndefined()
  })

  it('tell each listening tap of ingest, in order, and listen while any of them does', () => {
    const heard: string[] = []
    const tap = (name: string, listening: () => boolean): IngestTap => ({
      get listening() {
        return listening()
      },
      accepted: (source) => heard.push(`${name} accepted ${source}`),
      refused: (source) => heard.push(`${name} refused ${source}`),
    })
    let second = false
    const one = tap('one', () => true)
    expect(ingestTapOf([{ name: 'none' }])).toBeUndefined()
    expect(ingestTapOf([{ name: 'one', ingestTap: one }])).toBe(one)
    const both = ingestTapOf([
      { name: 'one', ingestTap: tap('one', () => false) },
      { name: 'two', ingestTap: tap('two', () => second) },
    ])!
    expect(both.listening).toBe(false)
    second = true
    expect(both.listening).toBe(true)
    both.accepted('web', {}, false)
    both.refused('app', { error: 'x' } as never, {})
    expect(heard).toEqual(['two accepted web', 'two refused app'])
  })
})
