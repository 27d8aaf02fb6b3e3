/** The longest `messageId` the relay stores, in characters (it is part of a unique index). */
export const MAX_MESSAGE_ID_CHARS = 200

// Fields that go into an indexed column, or that destinations use as identifiers: PostgreSQL's
// text cannot hold NUL, and an identifier with NUL is never what a client meant.
const IDENTIFIER_FIELDS = ['type', 'messageId', 'userId', 'anonymousId', 'event', 'groupId', 'previousId'] as const

// C0 and C1 control characters, and DEL.
function isControl(code: number): boolean {
  return code <= 0x1f || (code >= 0x7f && code <= 0x9f)
}

/** Why a store cannot hold `text` (it contains NUL), or `undefined`; `name` says what it is. */
export function findNul(name: string, text: string): string | undefined {
  return text.includes('\u0000')
    ? `${name} contains the NUL character (U+0000), which the store cannot hold`
    : undefined
}

/**
 * What a store could not hold of a valid message, or `undefined`: a `messageId` over
 * {@link MAX_MESSAGE_ID_CHARS} characters or with a control character; NUL in an identifier
 * field; a number JSON cannot carry (`1e400` parses as `Infinity`, which `JSON.stringify` would
 * silently turn into `null`). Checked before the commit, so one such message is refused on its
 * own instead of failing the transaction it shares with other requests.
 */
export function findUnstorable(message: Record<string, unknown>): string | undefined {
  const messageId = message['messageId']
  if (typeof messageId === 'string') {
    if (messageId.length > MAX_MESSAGE_ID_CHARS)
      return `messageId is ${messageId.length} characters, over the ${MAX_MESSAGE_ID_CHARS}-character limit`
    for (let i = 0; i < messageId.length; i++) {
      const code = messageId.charCodeAt(i)
      if (isControl(code)) return `messageId contains the control character ${codePoint(code)}`
    }
  }
  for (const field of IDENTIFIER_FIELDS) {
    const value = message[field]
    const nul = typeof value === 'string' ? findNul(field, value) : undefined
    if (nul !== undefined) return nul
  }
  const path = nonFinitePath(message, '')
  if (path !== undefined) return `${path} is a number JSON cannot carry (such as 1e400, which parses as Infinity)`
  return undefined
}

/**
 * Where in `value` a non-finite number is (`properties.price`, `items[2]`), or `undefined`. Every
 * message is checked, and almost none has one: the walk builds no path until it finds one.
 */
function nonFinitePath(value: unknown, path: string): string | undefined {
  if (!hasNonFinite(value)) return undefined
  if (typeof value === 'number') return path
  if (Array.isArray(value)) {
    const index = value.findIndex(hasNonFinite)
    return nonFinitePath(value[index], `${path}[${index}]`)
  }
  const [key, child] = Object.entries(value as object).find(([, v]) => hasNonFinite(v))!
  return nonFinitePath(child, path === '' ? key : `${path}.${key}`)
}

function hasNonFinite(value: unknown): boolean {
  if (typeof value === 'number') return !Number.isFinite(value)
  if (typeof value !== 'object' || value === null) return false
  if (Array.isArray(value)) {
    for (const item of value) if (hasNonFinite(item)) return true
    return false
  }
  for (const key in value) if (hasNonFinite((value as Record<string, unknown>)[key])) return true
  return false
}

function codePoint(code: number): string {
  return `U+${code.toString(16).toUpperCase().padStart(4, '0')}`
}
