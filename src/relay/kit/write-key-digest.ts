import { createHash, randomBytes } from 'node:crypto'

/**
 * A write key's SHA-256 digest, hex: how the store keeps an API source's keys (never the key) and
 * how ingest looks every key up, in memory.
 */
export function writeKeyDigest(writeKey: string): string {
  return createHash('sha256').update(writeKey, 'utf8').digest('hex')
}

// How many of a key's characters a listing shows, to tell keys apart: too few to guess the rest.
const PREFIX_LENGTH = 6

/** The characters of a key a listing shows (`prefix`). */
export function writeKeyPrefix(writeKey: string): string {
  return writeKey.slice(0, Math.min(PREFIX_LENGTH, Math.floor(writeKey.length / 4)))
}

/** A new write key (256 random bits) and the id its listing and its deletion name it by. */
export function newWriteKey(): { id: string; writeKey: string } {
  return { id: `wk_${randomBytes(9).toString('base64url')}`, writeKey: `tk_${randomBytes(32).toString('base64url')}` }
}
