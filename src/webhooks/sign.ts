import { createHmac, timingSafeEqual } from 'node:crypto'

/** The UTF-8 bytes of a body given as text or bytes (bytes are taken as they are). */
export function toBodyBytes(body: string | Uint8Array): Uint8Array {
  return typeof body === 'string' ? Buffer.from(body, 'utf8') : body
}

/**
 * The `X-Signature` of a body: the lower-case hex HMAC-SHA1 of its UTF-8 bytes, keyed with the
 * shared secret. Sign the exact bytes you send; a string is encoded as UTF-8.
 *
 * @example sign('{"type":"track"}', 's3cret') // 40 lower-case hex digits
 * @throws {TypeError} when `secret` is not a non-empty string.
 */
export function sign(body: string | Uint8Array, secret: string): string {
  if (typeof secret !== 'string' || secret === '') {
    throw new TypeError('sign(body, secret): the secret must be a non-empty string')
  }
  if (typeof body !== 'string' && !(body instanceof Uint8Array)) {
    throw new TypeError('sign(body, secret): the body must be a string or a Uint8Array (the raw body)')
  }
  return createHmac('sha1', secret).update(toBodyBytes(body)).digest('hex')
}

const SHA1_HEX = /^[0-9a-f]{40}$/i

/**
 * Whether `signature` (an `X-Signature` header) is the signature of `rawBody` under `secret`.
 * Pass the body exactly as received — a Buffer or its text — never a parsed and re-stringified
 * object. Compares in constant time and never throws: anything malformed is simply `false`.
 */
export function verifySignature(rawBody: string | Uint8Array, signature: unknown, secret: string): boolean {
  if (typeof signature !== 'string' || !SHA1_HEX.test(signature)) return false
  if (typeof secret !== 'string' || secret === '') return false
  if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) return false
  const expected = createHmac('sha1', secret).update(toBodyBytes(rawBody)).digest()
  // Both are 20 bytes here (the pattern above), which timingSafeEqual requires.
  return timingSafeEqual(expected, Buffer.from(signature, 'hex'))
}
