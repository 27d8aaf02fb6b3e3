import { redactUrl } from '../shared/redact-url'

// A URL inside free text: a scheme, `://`, then everything up to whitespace or a quote; punctuation
// that ends a sentence or a list item (`URL: HTTP 503`) is left out.
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]*[^\s"'<>`:;,.)\]]/gi
// `user:password@` right after the scheme. redactUrl drops it from http(s) URLs by taking their
// origin, but other schemes (postgres://) have no origin and keep it.
const USER_INFO = /^([a-z][a-z0-9+.-]*:\/\/)[^/?#@]*@/i

/**
 * Free text (an error message, a log line) with every URL in it cut to origin and path
 * ({@link redactUrl}): no query string, fragment or `user:password@`. For text shown to people
 * who should not see webhook tokens or database passwords: logs, `/healthz`, the operator page.
 */
export function redactUrlsInText(text: string): string {
  // A URL with nothing to hide is left exactly as written (redactUrl would add a `/` to a bare origin).
  return text.replace(URL_IN_TEXT, (url) => (/[?#@]/.test(url) ? redactUrl(url).replace(USER_INFO, '$1') : url))
}
