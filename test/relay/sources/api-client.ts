import { request } from 'undici'
import { ADMIN_TOKEN } from '../helpers'

/** What the relay answered: status, headers and parsed JSON body (when any). */
export interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: any
  text: string
}

/** Calls the admin API of the relay at `base` with the admin token (or `token`). */
export async function api(
  base: string,
  method: 'GET' | 'PUT' | 'POST' | 'DELETE',
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  token = ADMIN_TOKEN,
): Promise<Answer> {
  const response = await request(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await response.body.text()
  return {
    status: response.statusCode,
    headers: response.headers,
    body: text.length > 0 ? JSON.parse(text) : undefined,
    text,
  }
}

/** Webhooks settings sending to `url`. */
export function webhooksTo(url: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { destinations: { Webhooks: { webhooks: [{ url }], ...extra } } }
}

/** A 32-byte key in base64, as `secretsKey` takes it. */
export function newSecretsKey(): string {
  return Buffer.from(Array.from({ length: 32 }, () => Math.floor(Math.random() * 256))).toString('base64')
}
