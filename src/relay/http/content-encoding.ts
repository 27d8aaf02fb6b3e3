import type { Transform } from 'node:stream'
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib'
import { HttpError } from './http-error'

/** The compressed `Content-Encoding`s the relay decodes (docs/ingest.md, "The request"); `identity` is also accepted. */
export const CONTENT_ENCODINGS = ['gzip', 'deflate', 'br'] as const

/** A compressed encoding the relay decodes. */
export type ContentEncoding = (typeof CONTENT_ENCODINGS)[number]

// RFC 9110 §8.4.1.3: a recipient should treat x-gzip as gzip.
const ALIASES: Record<string, ContentEncoding> = { gzip: 'gzip', 'x-gzip': 'gzip', deflate: 'deflate', br: 'br' }

/**
 * The compression a request's `Content-Encoding` header names, or `undefined` for none
 * (absent, empty or `identity`). Codings are case insensitive; `identity` in a list is ignored.
 *
 * @throws {HttpError} 415 `ERR_CONTENT_ENCODING`, naming the encodings accepted, for an unknown
 * coding or more than one compression applied in turn.
 */
export function parseContentEncoding(header: string | undefined): ContentEncoding | undefined {
  if (header === undefined) return undefined
  const codings = header
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity')
  if (codings.length === 0) return undefined
  const known = codings.length === 1 ? ALIASES[codings[0]!] : undefined
  if (known !== undefined) return known
  const got = JSON.stringify(header.slice(0, 100))
  throw new HttpError(
    415,
    'ERR_CONTENT_ENCODING',
    codings.length > 1
      ? `send the body with one Content-Encoding at most (${CONTENT_ENCODINGS.join(', ')} or identity), got ${got}`
      : `Content-Encoding must be ${CONTENT_ENCODINGS.join(', ')} or identity, got ${got}`,
  )
}

/** A stream that decodes `encoding` (`deflate` is the zlib format, as RFC 9110 defines it). */
export function createDecoder(encoding: ContentEncoding): Transform {
  switch (encoding) {
    case 'gzip':
      return createGunzip()
    case 'deflate':
      return createInflate()
    case 'br':
      return createBrotliDecompress()
  }
}
