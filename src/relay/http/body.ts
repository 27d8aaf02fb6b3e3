import type { IncomingMessage, ServerResponse } from 'node:http'
import { HttpError } from './http-error'
import { readBody } from './read-body'

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
 * Reads a JSON request body of at most `maxBytes` ({@link readBody}: decoded from its
 * `Content-Encoding`, the limit held on the bytes sent and on the bytes decoded) and parses it.
 * The body is taken as JSON whatever its `Content-Type` says (or without one): real clients send
 * JSON as `text/plain` or under a form type. Refuses, with the status a client can act on: a body over
 * the limit (413), an encoding the relay does not decode (415), a compressed body that does not
 * decode (400), JSON that is malformed, nested deeper than {@link MAX_JSON_DEPTH}, or not an
 * object (400).
 */
export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<Record<string, unknown>> {
  const text = (await readBody(req, maxBytes)).toString('utf8')
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

/**
 * The deepest nesting of arrays and objects in a JSON text, found in one pass without parsing
 * (brackets inside strings do not count), so a hostile body never reaches a recursive walk.
 * Strings, most of a message's characters, are stepped over with `indexOf` rather than read.
 */
export function jsonDepth(text: string): number {
  let depth = 0
  let deepest = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      i = stringEnd(text, i)
      if (i === -1) break // unterminated: JSON.parse says so
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > deepest) deepest = depth
    } else if (c === 0x7d || c === 0x5d) {
      depth--
    }
  }
  return deepest
}

const QUOTE = 0x22
const BACKSLASH = 0x5c

// Where the string opened at `start` closes: the next quote not escaped by an odd run of
// backslashes before it; -1 if none does.
function stringEnd(text: string, start: number): number {
  let end = text.indexOf('"', start + 1)
  while (end !== -1 && text.charCodeAt(end - 1) === BACKSLASH) {
    let backslashes = 1
    while (text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes++
    if (backslashes % 2 === 0) break
    end = text.indexOf('"', end + 1)
  }
  return end
}
