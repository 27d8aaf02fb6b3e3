import type { IncomingMessage } from 'node:http'
import { HttpError } from '../../http/http-error'

// The page's forms hold a token or an id: a few hundred bytes. More is not a form of ours.
const MAX_FORM_BYTES = 8192

/**
 * Refuses a state-changing request that a page of another site could have made: `Sec-Fetch-Site`
 * (when the browser sends it) must say same-origin, and `Origin` (or, when a browser leaves it
 * out, `Referer`) must name this relay's host (`Host`, or `X-Forwarded-Host` behind a proxy that
 * rewrites `Host`). A cross-site form can set neither header.
 */
export function checkSameOrigin(req: IncomingMessage): void {
  const site = req.headers['sec-fetch-site']
  if (site !== undefined && site !== 'same-origin') throw forbidden(`the request came from another site (${site})`)
  const origin = hostOf(req.headers.origin) ?? hostOf(req.headers.referer)
  if (origin === undefined) throw forbidden('the request has no Origin or Referer naming this relay')
  const hosts = [req.headers.host, firstValue(req.headers['x-forwarded-host'])]
  if (!hosts.includes(origin)) throw forbidden('the request came from another origin')
}

/** Reads an `application/x-www-form-urlencoded` body of at most 8 KB (or `maxBytes`: a list of user ids). */
export async function readForm(req: IncomingMessage, maxBytes = MAX_FORM_BYTES): Promise<URLSearchParams> {
  const type = (req.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase()
  if (type !== 'application/x-www-form-urlencoded') {
    throw new HttpError(415, 'ERR_CONTENT_TYPE', 'the body must be a form (application/x-www-form-urlencoded)')
  }
  const text = await new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = []
    let received = 0
    const onData = (chunk: Buffer): void => {
      received += chunk.length
      if (received <= maxBytes) return void chunks.push(chunk)
      // Read no further; the connection is closed once the answer is written.
      req.off('data', onData)
      req.pause()
      reject(new HttpError(413, 'ERR_BODY_TOO_LARGE', `the form is over ${maxBytes} bytes`, { connection: 'close' }))
    }
    req.on('data', onData)
    req.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.once('error', (error) =>
      reject(new HttpError(400, 'ERR_REQUEST_ABORTED', `the form could not be read: ${error.message}`)),
    )
  })
  return new URLSearchParams(text)
}

/** Whether the browser reached the relay over TLS (directly, or through a proxy that says so). */
export function isSecure(req: IncomingMessage): boolean {
  const socket = req.socket as { encrypted?: boolean }
  return socket.encrypted === true || firstValue(req.headers['x-forwarded-proto'])?.toLowerCase() === 'https'
}

function hostOf(url: string | undefined): string | undefined {
  if (url === undefined || url === 'null') return undefined
  try {
    return new URL(url).host
  } catch {
    return undefined
  }
}

function firstValue(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header
  return value === undefined ? undefined : value.split(',', 1)[0]!.trim()
}

function forbidden(message: string): HttpError {
  return new HttpError(403, 'ERR_FORBIDDEN', message)
}
