import { createHash } from 'node:crypto'

/** A stable, URL-safe id of a webhook URL: the start of its SHA-256, base64url (16 characters). */
export function endpointId(url: string): string {
  return createHash('sha256').update(url).digest('base64url').slice(0, 16)
}
