/**
 * A URL as the log may show it: origin and path, without the query string or fragment (where
 * webhook tokens often travel) and without user info. Not a URL at all: everything before `?`/`#`.
 */
export function redactUrl(url: string): string {
  try {
    const { origin, pathname } = new URL(url)
    return origin === 'null' ? url.split(/[?#]/, 1)[0]! : `${origin}${pathname}`
  } catch {
    return url.split(/[?#]/, 1)[0]!
  }
}
