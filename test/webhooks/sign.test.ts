import { describe, expect, it } from 'vitest'
import { sign, verifySignature } from '../../src/webhooks/index'

// Vectors computed independently with `printf '%s' BODY | openssl dgst -sha1 -hmac SECRET`.
const vectors = [
  {
    body: '{"type":"track","event":"Order Completed"}',
    secret: 's3cret',
    hex: '3c7e2620e0addbd737910464c501c3879e2da7d6',
  },
  { body: '{"name":"crème brûlée ☕ 🎉"}', secret: 's3cret', hex: 'aa469995df621668ca4be0a8765e6058e52f5ce9' },
  { body: 'body', secret: 'clé-secrète', hex: 'c3affa6596762b570bdd11213a2bbbbd7b34d319' },
  { body: '', secret: 's3cret', hex: '3e48575537919d9187078407ecb88e44b1d674e4' },
  // RFC 2202, test case 2.
  { body: 'what do ya want for nothing?', secret: 'Jefe', hex: 'effcdf6ae5eb2fa2d27416d5f184df9c259a7c79' },
]

describe('sign', () => {
  it.each(vectors)('signs $body with $secret', ({ body, secret, hex }) => {
    expect(sign(body, secret)).toBe(hex)
  })

  it('signs bytes the same as the text they encode (UTF-8)', () => {
    const { body, secret, hex } = vectors[1]!
    expect(sign(Buffer.from(body, 'utf8'), secret)).toBe(hex)
    expect(sign(new TextEncoder().encode(body), secret)).toBe(hex)
  })

  it('does not sign the escaped form of the same JSON (the bytes differ, so the signature does)', () => {
    expect(sign('{"name":"caf\\u00e9"}', 's3cret')).toBe('b0179f0fb5fca909eebaf47c26b6e35188bf7aed')
    expect(sign('{"name":"café"}', 's3cret')).not.toBe('b0179f0fb5fca909eebaf47c26b6e35188bf7aed')
  })

  it('refuses an empty or missing secret', () => {
    expect(() => sign('{}', '')).toThrow(TypeError)
    expect(() => sign('{}', undefined as unknown as string)).toThrow(/secret must be a non-empty string/)
  })
})

describe('verifySignature', () => {
  const { body, secret, hex } = vectors[1]!

  it('accepts the signature of the raw body, as text or bytes, in either case of hex', () => {
    expect(verifySignature(body, hex, secret)).toBe(true)
    expect(verifySignature(Buffer.from(body), hex, secret)).toBe(true)
    expect(verifySignature(body, hex.toUpperCase(), secret)).toBe(true)
  })

  it.each([
    ['a wrong secret', body, hex, 'other'],
    ['a tampered body', body.replace('brûlée', 'brulee'), hex, secret],
    ['a re-stringified body with other whitespace', JSON.stringify(JSON.parse(body), null, 2), hex, secret],
    ['a signature with one digit changed', body, `${hex.slice(0, -1)}0`, secret],
    ['an empty signature', body, '', secret],
    ['a truncated signature', body, hex.slice(0, 39), secret],
    ['a too-long signature', body, `${hex}00`, secret],
    ['a signature that is not hex', body, 'z'.repeat(40), secret],
    ['a signature with a scheme prefix', body, `sha1=${hex}`, secret],
    ['an empty secret', body, hex, ''],
  ])('refuses %s', (_case, rawBody, signature, key) => {
    expect(verifySignature(rawBody, signature, key)).toBe(false)
  })

  it.each([
    ['undefined', undefined],
    ['null', null],
    ['a number', 42],
    ['an array of headers', [hex]],
    ['an object', { hex }],
  ])('refuses a signature that is %s, without throwing', (_case, signature) => {
    expect(verifySignature(body, signature, secret)).toBe(false)
  })

  it('refuses a parsed body instead of the raw one, without throwing', () => {
    expect(verifySignature(JSON.parse(body) as unknown as string, hex, secret)).toBe(false)
  })
})
