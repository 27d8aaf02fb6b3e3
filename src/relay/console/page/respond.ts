import type { ServerResponse } from 'node:http'
import { HttpError } from '../../http/http-error'
import type { Html } from './html'

/** How often the overview (and the outage page) reloads by itself, seconds, unless `?refresh=off`. */
export const REFRESH_SECONDS = 10

// No script runs on the page at all, inline or not; styles come from /ui/page.css only; forms post
// only here; no other site may frame it.
export const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
}

/** Answers `body` as an HTML page, with the page's security headers. */
export function sendHtml(res: ServerResponse, status: number, body: Html, headers: Record<string, string> = {}): void {
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(body.text),
    ...headers,
  })
  res.end(body.text)
}

/** After a POST, a 303 to a page: reloading it never posts again. */
export function redirect(res: ServerResponse, location: string, headers: Record<string, string> = {}): void {
  res.writeHead(303, { ...SECURITY_HEADERS, location, 'content-length': 0, ...headers })
  res.end()
}

/** `?refresh=off` turns the page's reloading off; anything else there is a mistake, said so. */
export function refreshOf(url: URL): number | undefined {
  const value = url.searchParams.get('refresh')
  if (value === null) return REFRESH_SECONDS
  if (value === 'off') return undefined
  throw new HttpError(
    400,
    'ERR_INVALID_QUERY',
    `refresh can only be "off" (the page reloads every ${REFRESH_SECONDS} s without it)`,
  )
}
