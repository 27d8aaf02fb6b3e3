/** What a write key is replaced with in anything the command prints. */
export const REDACTED = '[write key]'

// A key is redacted where it stands as a value, never inside a word: with a key of `e`, the
// message "use one of identify" must stay readable. A value is what follows `=` (the flag
// itself, a query parameter), a quote, `:`, `/`, `@`, `?`, `&`, a bracket or an auth scheme
// (`Basic `), and ends at the end of the text, a space, a quote or a URL or list delimiter.
const BEFORE_VALUE = String.raw`(?<=[='"\x60:/@?&(\[<]|\b(?:Basic|Bearer) )`
const AFTER_VALUE = String.raw`(?=$|[\s'"\x60:/@?&#)\]>,;]|\.(?!\w))`

/**
 * `text` with every write key in `keys` replaced by `[write key]` where it stands as a value:
 * after `--writeKey=`, in quotes, in a URL's user info, path or query, or in an HTTP Basic
 * `Authorization` header (the key, or its Basic credentials in base64). Empty keys are ignored.
 */
export function redactWriteKeys(text: string, keys: readonly string[]): string {
  let redacted = text
  for (const key of keys) {
    if (key === '') continue
    for (const form of new Set([key, encodeURIComponent(key), Buffer.from(`${key}:`).toString('base64')])) {
      redacted = redacted.replace(new RegExp(`${BEFORE_VALUE}${escapeRegExp(form)}${AFTER_VALUE}`, 'g'), REDACTED)
    }
  }
  return redacted
}

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&')
}
