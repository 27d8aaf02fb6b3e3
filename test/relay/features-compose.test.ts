import { describe, expect, it } from 'vitest'
import { ingestCheckOf } from '../../src/relay/features/compose'
import { checkFeatureOrder, type Feature } from '../../src/relay/features/feature'
import type { IngestCheck } from '../../src/relay/ingest/ingest-check'

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
})
