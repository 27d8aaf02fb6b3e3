import { request } from 'undici'
import { ADMIN_TOKEN } from '../helpers'

/** A response of the operator page. */
export interface PageResponse {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

/** A browser-like client of the operator page: it keeps the session cookie and sends an Origin. */
export class PageClient {
  readonly base: string
  cookie: string | undefined

  constructor(base: string) {
    this.base = base
  }

  async get(path: string): Promise<PageResponse> {
    const response = await request(`${this.base}${path}`, {
      headers: this.cookie === undefined ? {} : { cookie: this.cookie },
    })
    return { status: response.statusCode, headers: response.headers, body: await response.body.text() }
  }

  /** POSTs a form, from this relay's own origin unless `headers` says otherwise. */
  async post(
    path: string,
    fields: Record<string, string>,
    headers: Record<string, string> = {},
  ): Promise<PageResponse> {
    const response = await request(`${this.base}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: this.base,
        ...(this.cookie === undefined ? {} : { cookie: this.cookie }),
        ...headers,
      },
      body: new URLSearchParams(fields).toString(),
    })
    return { status: response.statusCode, headers: response.headers, body: await response.body.text() }
  }

  /** Signs in with the admin token and keeps the session cookie. */
  async signIn(token = ADMIN_TOKEN): Promise<PageResponse> {
    const response = await this.post('/ui/sign-in', { token, next: '/' })
    const setCookie = response.headers['set-cookie']
    const first = Array.isArray(setCookie) ? setCookie[0] : setCookie
    if (response.status === 303 && first !== undefined) this.cookie = first.split(';', 1)[0]
    return response
  }

  /** The CSRF token of the last page a form was read from. */
  static csrfOf(html: string): string {
    const match = /name="csrf" value="([^"]+)"/.exec(html)
    if (match === null) throw new Error('the page has no CSRF field')
    return match[1]!
  }
}
