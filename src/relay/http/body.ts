import type { IncomingMessage, ServerResponse } from 'node:http'
import { HttpError } from './http-error'

/** JSON nested deeper than this is refused before it is parsed (traits rarely go past 5). */
export const MAX_JSON_DEPTH = 64

/** Answers `body` as JSON with `status`. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const json = JSON.stringify(body)
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(json),
    ...headers,
  })
  res.end(json)
}

/** Answers an {@link HttpError} as `{ error: { code, message } }`. */
export function sendError(res: ServerResponse, error: HttpError): void {
  sendJson(res, error.status, { error: { code: error.code, message: error.message } }, error.headers)
}

/**
 * Reads a JSON request body of at most `maxBytes` and parses it. Refuses, with the status a
 * client can act on: a content type other than JSON (415); a declared or actual length over the
 * limit (413, decided from `Content-Length` before reading, or as soon as the limit is crossed,
 * without reading further); JSON that is malformed, nested deeper than {@link MAX_JSON_DEPTH},
 * or not an object (400).
 */
export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<Record<string, unknown>> {
  const contentType = req.headers['content-type']
  if (contentType === undefined || !isJsonContentType(contentType)) {
    throw new HttpError(
      415,
      'ERR_CONTENT_TYPE',
      `the body must be JSON, sent with Content-Type: application/json (got ${contentType === undefined ? 'no Content-Type' : JSON.stringify(contentType.slice(0, 100))})`,
    )
  }
  const declared = Number(req.headers['content-length'])
  if (declared > maxBytes) throw tooLarge(maxBytes, `Content-Length is ${declared}`)

  const text = await readText(req, maxBytes)
  const depth = jsonDepth(text)
  if (depth > MAX_JSON_DEPTH) {
    throw new HttpError(400, 'ERR_JSON_TOO_DEEP', `the JSON body is nested deeper than ${MAX_JSON_DEPTH} levels`)
  }
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch (error) {
    throw new HttpError(400, 'ERR_MALFORMED_JSON', `the body is not valid JSON: ${(error as Error).message}`)
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new HttpError(400, 'ERR_INVALID_BODY', 'the body must be a JSON object')
  }
  return body as Record<string, unknown>
}

function isJsonContentType(value: string): boolean {
  const mediaType = value.split(';', 1)[0]!.trim().toLowerCase()
  return mediaType === 'application/json' || (mediaType.startsWith('application/') && mediaType.endsWith('+json'))
}

function tooLarge(maxBytes: number, detail: string): HttpError {
  // The rest of the body is not read: closing the connection after the answer is the only way
  // not to, so say so.
  return new HttpError(413, 'ERR_BODY_TOO_LARGE', `the body is over the ${maxBytes}-byte limit (${detail})`, {
    connection: 'close',
  })
}

function readText(req: IncomingMessage, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let received = 0
    const onData = (chunk: Buffer): void => {
      received += chunk.length
      if (received > maxBytes) {
        cleanup()
        // Stop reading: the socket is paused and closed once the 413 is written.
        req.pause()
        reject(tooLarge(maxBytes, `more than ${maxBytes} bytes were sent`))
        return
      }
      chunks.push(chunk)
    }
    const onEnd = (): void => {
      cleanup()
      resolve(Buffer.concat(chunks, received).toString('utf8'))
    }
    const onError = (error: Error): void => {
      cleanup()
      reject(new HttpError(400, 'ERR_REQUEST_ABORTED', `the request body could not be read: ${error.message}`))
    }
    const cleanup = (): void => {
      req.off('data', onData)
      req.off('end', onEnd)
      req.off('error', onError)
    }
    req.on('data', onData)
    req.on('end', onEnd)
    req.on('error', onError)
  })
}

/**
 * The deepest nesting of arrays and objects in a JSON text, found in one pass without parsing
 * (brackets inside strings do not count), so a hostile body never reaches a recursive walk.
 */
export function jsonDepth(text: string): number {
  let depth = 0
  let deepest = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c)
        i++ // a backslash escapes the next character
      else if (c === 0x22) inString = false
    } else if (c === 0x22) {
      inString = true
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > deepest) deepest = depth
    } else if (c === 0x7d || c === 0x5d) {
      depth--
    }
  }
  return deepest
}
