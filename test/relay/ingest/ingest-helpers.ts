import { request } from 'undici'
import { basic, WRITE_KEY } from '../helpers'

/**
 * POSTs raw bytes to the relay and returns the status and parsed answer. Basic auth with the test
 * write key and `Content-Type: application/json` unless `headers` say otherwise (a header set to
 * `undefined` is left out).
 */
export async function postBytes(
  url: string,
  body: Buffer | string,
  headers: Record<string, string | undefined> = {},
): Promise<{ status: number; body: any }> {
  const merged: Record<string, string | undefined> = {
    authorization: basic(WRITE_KEY),
    'content-type': 'application/json',
    ...headers,
  }
  const sent = Object.fromEntries(
    Object.entries(merged).filter((entry): entry is [string, string] => entry[1] !== undefined),
  )
  const response = await request(url, { method: 'POST', headers: sent, body })
  const text = await response.body.text()
  return { status: response.statusCode, body: text.length > 0 ? JSON.parse(text) : undefined }
}
