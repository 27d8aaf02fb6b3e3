// The page's own origin as `new URL` needs one; never a real host.
const BASE = 'http://relay.invalid'

// Never in a path the page links to: whitespace and control characters (URL parsing drops tabs
// and newlines, so `/\t/x` is `//x`), a backslash (browsers read it as `/`), and in the path a
// percent-encoded slash, backslash or dot (`/%2F/x`, `/%5Cx`, `/%2e%2e//x`).
const ENCODED_IN_PATH = /%(?:2f|5c|2e)/i

/**
 * A path on this relay to return to after sign-in, from the sign-in form's `next`; anything else
 * is `/`. Whatever the encoding or dot segments, the answer is one path on this relay: it starts
 * with a single `/` after the URL parser resolved it (`/.//evil.example` resolves to
 * `//evil.example`, which a browser would follow to another site). Percent-encoded as a URL would
 * be (`/€` → `/%E2%82%AC`): a Location header is ASCII only.
 */
export function localPath(value: string): string {
  const path = value.split(/[?#]/, 1)[0]!
  if (!path.startsWith('/') || hasUnsafeCharacter(value) || ENCODED_IN_PATH.test(path)) return '/'
  let url: URL
  try {
    url = new URL(value, BASE)
  } catch {
    return '/'
  }
  const local = `${url.pathname}${url.search}`
  if (url.origin !== BASE || !/^\/(?![/\\])/.test(local) || local.startsWith('/ui/sign-')) return '/'
  return local
}

function hasUnsafeCharacter(value: string): boolean {
  for (const char of value) {
    const code = char.codePointAt(0)!
    if (code < 0x20 || code === 0x7f || char === '\\' || /\s/.test(char)) return true
  }
  return false
}
