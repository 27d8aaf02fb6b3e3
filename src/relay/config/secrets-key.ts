import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import type { Rule } from '../kit/rules'

/** The environment variable read when `secretsKey` is not given. */
export const SECRETS_KEY_ENV = 'TRACKLET_SECRETS_KEY'

// What marks a stored value as encrypted, and by which scheme: AES-256-GCM, a 12-byte IV, the
// 16-byte tag, then the ciphertext, base64.
const PREFIX = 'enc:v1:'
const KEY_BYTES = 32
const IV_BYTES = 12
const TAG_BYTES = 16

/**
 * `secretsKey`: one key, or several separated by commas while rotating (the first encrypts, every
 * one decrypts; docs/relay.md, "Rotating secretsKey"), each 32 bytes in base64. A secret: its
 * value is never shown.
 */
export const secretsKeyRule: Rule<string> = (value, field, problems) => {
  if (typeof value !== 'string' || value.length === 0) {
    problems.add(
      field,
      `must be ${KEY_BYTES} bytes in base64 (such as \`openssl rand -base64 32\`), got ${typeof value}`,
    )
    return undefined
  }
  const bad = value.split(',').findIndex((part) => decodeKey(part) === undefined)
  if (bad === -1) return value
  problems.add(
    field,
    `${value.includes(',') ? `key ${bad + 1} of the list ` : ''}must be ${KEY_BYTES} bytes in base64 (such as \`openssl rand -base64 32\`)`,
  )
  return undefined
}

function decodeKey(text: string): Buffer | undefined {
  const trimmed = text.trim()
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(trimmed)) return undefined
  const key = Buffer.from(trimmed, 'base64')
  return key.length === KEY_BYTES ? key : undefined
}

/** A value read from the store could not be decrypted with any key given. */
export class UndecryptableSecret extends Error {}

/**
 * Encrypts and decrypts the secrets of sources written through the admin API (AES-256-GCM under
 * `secretsKey`). Without a key it can do neither: {@link available} says so.
 */
export class SecretBox {
  readonly #keys: Buffer[]

  /** @param secretsKey the option's value, already validated by {@link secretsKeyRule}. */
  constructor(secretsKey: string | undefined) {
    this.#keys = secretsKey === undefined ? [] : secretsKey.split(',').map((part) => decodeKey(part)!)
  }

  /** Whether a key is configured (a secret cannot be written through the API without one). */
  get available(): boolean {
    return this.#keys.length > 0
  }

  /** `plain`, encrypted under the first key. */
  encrypt(plain: string): string {
    const key = this.#keys[0]
    if (key === undefined) throw new Error('no secretsKey to encrypt with')
    const iv = randomBytes(IV_BYTES)
    const cipher = createCipheriv('aes-256-gcm', key, iv)
    const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()])
    return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64')
  }

  /**
   * What {@link encrypt} made, in clear, with whichever key opens it (GCM's tag tells a wrong one).
   * @throws {UndecryptableSecret} when none does (or there is no key).
   */
  decrypt(stored: string): string {
    if (!stored.startsWith(PREFIX)) throw new UndecryptableSecret('the stored value is not an encrypted secret')
    const raw = Buffer.from(stored.slice(PREFIX.length), 'base64')
    const iv = raw.subarray(0, IV_BYTES)
    const tag = raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES)
    const sealed = raw.subarray(IV_BYTES + TAG_BYTES)
    for (const key of this.#keys) {
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, iv)
        decipher.setAuthTag(tag)
        return Buffer.concat([decipher.update(sealed), decipher.final()]).toString('utf8')
      } catch {
        // Not this key: the next one, if any.
      }
    }
    throw new UndecryptableSecret(
      this.#keys.length === 0
        ? `no secretsKey is configured (option secretsKey or ${SECRETS_KEY_ENV})`
        : 'no key of secretsKey opens it',
    )
  }
}
