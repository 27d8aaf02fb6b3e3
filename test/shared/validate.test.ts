import { describe, expect, it } from 'vitest'
import { findMessageProblem, findWireMessageProblem } from '../../src/shared/validate'

describe('findMessageProblem', () => {
  it('accepts the minimal valid call of each type', () => {
    expect(findMessageProblem('identify', { userId: '42' })).toBeUndefined()
    expect(findMessageProblem('track', { anonymousId: 'a1', event: 'Viewed' })).toBeUndefined()
    expect(findMessageProblem('page', { userId: '42' })).toBeUndefined()
    expect(findMessageProblem('screen', { userId: '42', name: 'Home' })).toBeUndefined()
    expect(findMessageProblem('group', { userId: '42', groupId: 'acme' })).toBeUndefined()
    expect(findMessageProblem('alias', { userId: '42', previousId: 'anon-7' })).toBeUndefined()
  })

  it('needs userId or anonymousId', () => {
    expect(findMessageProblem('identify', { traits: {} })).toBe('identify needs userId or anonymousId')
    expect(findMessageProblem('track', { event: 'E' })).toBe('track needs userId or anonymousId')
  })

  it('needs the fields each type requires', () => {
    expect(findMessageProblem('track', { userId: '1' })).toBe('track needs event')
    expect(findMessageProblem('group', { userId: '1' })).toBe('group needs groupId')
    expect(findMessageProblem('alias', { previousId: 'p' })).toBe('alias needs userId')
    expect(findMessageProblem('alias', { userId: 'u', anonymousId: 'a' })).toBe('alias needs previousId')
  })

  it('names the field and the value when a type is wrong', () => {
    expect(findMessageProblem('track', { userId: 42, event: 'E' })).toBe(
      'userId must be a non-empty string, got number 42',
    )
    expect(findMessageProblem('track', { userId: '', event: 'E' })).toBe('userId must be a non-empty string, got ""')
    expect(findMessageProblem('identify', { userId: '1', traits: [] })).toBe('traits must be an object, got an array')
    expect(findMessageProblem('page', { userId: '1', name: 3 })).toBe('name must be a string, got number 3')
    expect(findMessageProblem('identify', 'x')).toBe('a identify call takes an object of fields, got "x"')
  })

  it('accepts a Date or a zoned ISO string as timestamp, and nothing else', () => {
    expect(findMessageProblem('identify', { userId: '1', timestamp: new Date(0) })).toBeUndefined()
    expect(findMessageProblem('identify', { userId: '1', timestamp: '2020-01-02T03:04:05.678Z' })).toBeUndefined()
    expect(findMessageProblem('identify', { userId: '1', timestamp: '2020-01-02T03:04:05+02:00' })).toBeUndefined()
    expect(findMessageProblem('identify', { userId: '1', timestamp: '2020-01-02T03:04:05' })).toMatch(/time zone/)
    expect(findMessageProblem('identify', { userId: '1', timestamp: 'yesterday' })).toMatch(/^timestamp must be/)
    expect(findMessageProblem('identify', { userId: '1', timestamp: new Date(Number.NaN) })).toBe(
      'timestamp is an invalid Date',
    )
    expect(findMessageProblem('identify', { userId: '1', timestamp: 0 })).toMatch(/^timestamp must be/)
  })

  it('accepts boolean or object integration flags only', () => {
    expect(
      findMessageProblem('track', { userId: '1', event: 'E', integrations: { All: false, Webhooks: { a: 1 } } }),
    ).toBeUndefined()
    expect(findMessageProblem('track', { userId: '1', event: 'E', integrations: { Webhooks: 'yes' } })).toBe(
      'integrations.Webhooks must be true, false or an object of options, got "yes"',
    )
    expect(findMessageProblem('track', { userId: '1', event: 'E', integrations: [] })).toBe(
      'integrations must be an object, got an array',
    )
  })
})

describe('findWireMessageProblem', () => {
  it('checks the type, then the fields of that type', () => {
    expect(findWireMessageProblem({ type: 'track', userId: '1', event: 'E' })).toBeUndefined()
    expect(findWireMessageProblem({ type: 'trak', userId: '1' })).toBe(
      'type must be one of identify, track, page, screen, group, alias, got "trak"',
    )
    expect(findWireMessageProblem({ type: 'track', userId: '1' })).toBe('track needs event')
    expect(findWireMessageProblem(null)).toBe('a message must be an object, got null')
  })
})
