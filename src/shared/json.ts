import { utf8Length } from './utf8'

/** The result of serialising a value once: the exact bytes that will be measured and sent. */
export type Serialized = { ok: true; json: string; bytes: number } | { ok: false; problem: string }

/**
 * `JSON.stringify` that reports instead of throwing: a cycle, a `BigInt` or a throwing `toJSON`
 * becomes a `problem` sentence. `bytes` is the UTF-8 length of `json` (bytes, not characters).
 */
export function serialize(value: unknown): Serialized {
  let json: string | undefined
  try {
    json = JSON.stringify(value)
  } catch (error) {
    return { ok: false, problem: `cannot be serialised to JSON: ${(error as Error).message}` }
  }
  if (json === undefined) return { ok: false, problem: 'cannot be serialised to JSON' }
  return { ok: true, json, bytes: utf8Length(json) }
}
