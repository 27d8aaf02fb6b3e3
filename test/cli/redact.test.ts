import { describe, expect, it } from 'vitest'
import { redactWriteKeys } from '../../src/cli/redact'

const basic = (key: string) => Buffer.from(`${key}:`).toString('base64')

describe('redactWriteKeys', () => {
  it('leaves words alone when a 1-character key is a letter of them', () => {
    const text = 'unknown --type "click": use one of identify, track, page, screen, group, alias'
    expect(redactWriteKeys(text, ['e'])).toBe(text)
    expect(redactWriteKeys(text, ['a'])).toBe(text)
    expect(redactWriteKeys('must be a JSON object, got an array', ['a'])).toBe('must be a JSON object, got an array')
  })

  it('leaves words alone when a 2-character key is part of them', () => {
    const text = 'delivery failed: POST http://127.0.0.1:8080/v1/batch: request timed out; gave up'
    expect(redactWriteKeys(text, ['ti'])).toBe(text)
    expect(redactWriteKeys(text, ['ba'])).toBe(text)
  })

  it('redacts a 1-character key where it stands as a value: the flag, quotes, a URL', () => {
    expect(redactWriteKeys("Unexpected argument 'e'. This command does not take positional arguments", ['e'])).toBe(
      "Unexpected argument '[write key]'. This command does not take positional arguments",
    )
    expect(redactWriteKeys('bad: --writeKey=e', ['e'])).toBe('bad: --writeKey=[write key]')
    expect(redactWriteKeys('got "e" here', ['e'])).toBe('got "[write key]" here')
    expect(redactWriteKeys('POST http://e@relay.test/v1/batch?key=e&x=1: HTTP 400', ['e'])).toBe(
      'POST http://[write key]@relay.test/v1/batch?key=[write key]&x=1: HTTP 400',
    )
  })

  it('redacts a 2-character key as a value and in a Basic Authorization header', () => {
    expect(redactWriteKeys(`authorization: Basic ${basic('ab')}`, ['ab'])).toBe('authorization: Basic [write key]')
    expect(redactWriteKeys('Authorization: Basic ab', ['ab'])).toBe('Authorization: Basic [write key]')
    expect(redactWriteKeys('http://user:ab@host/ab/x', ['ab'])).toBe('http://user:[write key]@host/[write key]/x')
    expect(redactWriteKeys("'ab' and about abba cab", ['ab'])).toBe("'[write key]' and about abba cab")
  })

  it('redacts a long key and its URL-encoded form, with regular-expression characters taken literally', () => {
    const key = 'wk_a+b/c.d'
    expect(redactWriteKeys(`--writeKey=${key} and ?k=${encodeURIComponent(key)}`, [key])).toBe(
      '--writeKey=[write key] and ?k=[write key]',
    )
    expect(redactWriteKeys('wk_aXb/c.d is another', [key])).toBe('wk_aXb/c.d is another')
  })

  it('ignores empty keys', () => {
    expect(redactWriteKeys("'' =", [''])).toBe("'' =")
  })
})
