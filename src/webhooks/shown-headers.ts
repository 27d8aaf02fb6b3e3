/** What a failed attempt shows for a signature header: that it was sent, never its value. */
export const PRESENT = '(present)'
/** What a failed attempt shows for the value of a header the user configured (it may be a credential). */
export const REDACTED = '(redacted)'

// The signing headers whose value is not secret (an id and a time), shown as sent.
const PLAIN_SIGNING_HEADERS = new Set(['webhook-id', 'webhook-timestamp'])

/**
 * A request's headers as a failed attempt may show them, with no secret: the destination's own
 * headers as sent, the configured ones with their values redacted, and the signatures
 * (`X-Signature`, `webhook-signature`) as present.
 */
export function shownHeaders(
  own: Readonly<Record<string, string>>,
  configured: Readonly<Record<string, string>>,
  signing: Readonly<Record<string, string>>,
): Record<string, string> {
  const shown: Record<string, string> = { ...own }
  for (const name of Object.keys(configured)) shown[name] = REDACTED
  for (const [name, value] of Object.entries(signing)) {
    shown[name] = PLAIN_SIGNING_HEADERS.has(name.toLowerCase()) ? value : PRESENT
  }
  return shown
}
