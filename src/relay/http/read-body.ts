import type { IncomingMessage } from 'node:http'
import type { Readable, Transform } from 'node:stream'
import { type ContentEncoding, createDecoder, parseContentEncoding } from './content-encoding'
import { HttpError } from './http-error'

/**
 * Reads a request body of at most `maxBytes`, decoded from its `Content-Encoding` by streaming.
 * The limit holds twice: on the bytes sent (decided from `Content-Length` before reading, or as
 * soon as more arrive) and on the decoded bytes, where decoding stops the moment it is crossed —
 * so a small body that would inflate to gigabytes costs one chunk past the limit, never more.
 *
 * @throws {HttpError} 413 `ERR_BODY_TOO_LARGE` over the limit (the rest is not read); 415
 * `ERR_CONTENT_ENCODING` for an encoding the relay does not decode; 400 `ERR_MALFORMED_BODY` for
 * a compressed body that does not decode; 400 `ERR_REQUEST_ABORTED` when the client went away.
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const encoding = parseContentEncoding(req.headers['content-encoding'])
  const declared = Number(req.headers['content-length'])
  if (declared > maxBytes) return Promise.reject(tooLarge(maxBytes, `Content-Length is ${declared}`))
  return readLimited(req, maxBytes, encoding === undefined ? undefined : { encoding, decoder: createDecoder(encoding) })
}

/** The decoding of a compressed body: its name (for error messages) and the stream doing it. */
export interface Decoding {
  encoding: ContentEncoding
  decoder: Transform
}

/**
 * Reads `source` to its end through `decoding` (if any), holding each of the bytes read and the
 * bytes decoded to `maxBytes`. On any refusal `source` is paused (not read further) and the
 * decoder destroyed, so no more work is done for this body. Exported for tests that watch the
 * decoder stop.
 */
export function readLimited(source: Readable, maxBytes: number, decoding?: Decoding): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const decoder = decoding?.decoder
    const chunks: Buffer[] = []
    let received = 0
    let collected = 0
    let settled = false

    const collect = (chunk: Buffer): boolean => {
      collected += chunk.length
      if (collected > maxBytes) {
        fail(tooLarge(maxBytes, `it decodes to more than ${maxBytes} bytes of ${decoding?.encoding}`))
        return false
      }
      chunks.push(chunk)
      return true
    }
    const onSourceData = (chunk: Buffer): void => {
      received += chunk.length
      if (received > maxBytes) fail(tooLarge(maxBytes, `more than ${maxBytes} bytes were sent`))
      else if (decoder === undefined) collect(chunk)
      else if (!decoder.write(chunk)) source.pause()
    }
    const onDrain = (): void => {
      if (!settled) source.resume()
    }
    const onSourceEnd = (): void => {
      if (decoder === undefined) finish()
      else decoder.end()
    }
    const onSourceError = (error: Error): void =>
      fail(new HttpError(400, 'ERR_REQUEST_ABORTED', `the request body could not be read: ${error.message}`))
    const onDecoderError = (error: Error): void =>
      fail(
        new HttpError(
          400,
          'ERR_MALFORMED_BODY',
          `the body is not valid ${decoding?.encoding} data (as its Content-Encoding says): ${error.message}`,
        ),
      )

    const detach = (): void => {
      source.off('data', onSourceData)
      source.off('end', onSourceEnd)
      source.off('error', onSourceError)
      if (decoder !== undefined) {
        decoder.off('data', collect)
        decoder.off('drain', onDrain)
        decoder.off('end', finish)
        decoder.off('error', onDecoderError)
      }
    }
    function finish(): void {
      if (settled) return
      settled = true
      detach()
      resolve(Buffer.concat(chunks, collected))
    }
    function fail(error: HttpError): void {
      if (settled) return
      settled = true
      detach()
      // Stop reading: the socket stays paused until the answer is written and it is closed.
      source.pause()
      if (decoder !== undefined) {
        // A write still in the compression library may report after this: nothing listens then.
        decoder.on('error', () => {})
        decoder.destroy()
      }
      reject(error)
    }

    source.on('data', onSourceData)
    source.on('end', onSourceEnd)
    source.on('error', onSourceError)
    if (decoder !== undefined) {
      decoder.on('data', collect)
      decoder.on('drain', onDrain)
      decoder.on('end', finish)
      decoder.on('error', onDecoderError)
    }
  })
}

function tooLarge(maxBytes: number, detail: string): HttpError {
  // The rest of the body is not read: closing the connection after the answer is the only way
  // not to, so say so.
  return new HttpError(413, 'ERR_BODY_TOO_LARGE', `the body is over the ${maxBytes}-byte limit (${detail})`, {
    connection: 'close',
  })
}
