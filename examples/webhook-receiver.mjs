// A webhook receiver in plain node:http that checks each delivery's X-Signature.
//
//   npm run build
//   WEBHOOK_SECRET=s3cret PORT=8080 node examples/webhook-receiver.mjs
//
// The signature covers the exact bytes sent, so it is checked against the RAW body, before any
// JSON.parse: re-stringifying a parsed body can change those bytes (key order, spacing, escapes).
import { createServer } from 'node:http'
import { pathToFileURL } from 'node:url'
import { verifySignature } from 'tracklet/webhooks'

const MAX_BODY_BYTES = 1024 * 1024

/**
 * Starts the receiver. Resolves once it listens, with its `url` and a `close()`.
 * @param {{ port?: number, host?: string, secret?: string, onMessage?: (message: object, headers: import('node:http').IncomingHttpHeaders) => void }} options
 *   `secret`: the destination's sharedSecret; without one, deliveries are accepted unsigned.
 */
export async function startReceiver({ port = 0, host = '127.0.0.1', secret, onMessage = () => {} } = {}) {
  const server = createServer((req, res) => {
    if (req.method !== 'POST') return reply(res, 405, 'POST only')
    const chunks = []
    let size = 0
    req.on('data', (chunk) => {
      size += chunk.length
      if (size > MAX_BODY_BYTES) req.destroy()
      else chunks.push(chunk)
    })
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks)
      if (secret !== undefined && !verifySignature(rawBody, req.headers['x-signature'], secret)) {
        return reply(res, 401, 'bad or missing X-Signature')
      }
      let message
      try {
        message = JSON.parse(rawBody.toString('utf8'))
      } catch {
        return reply(res, 400, 'the body is not JSON')
      }
      onMessage(message, req.headers)
      reply(res, 204)
    })
  })
  await new Promise((resolve) => server.listen(port, host, resolve))
  const { port: actualPort } = server.address()
  return {
    url: `http://${host}:${actualPort}/`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}

function reply(res, status, text) {
  res.writeHead(status, text === undefined ? {} : { 'Content-Type': 'text/plain' }).end(text)
}

// Run as a program (not when imported by the demo or a test).
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const secret = process.env.WEBHOOK_SECRET || undefined
  const receiver = await startReceiver({
    port: Number(process.env.PORT ?? 8080),
    host: process.env.HOST ?? '127.0.0.1',
    secret,
    onMessage: (message) => console.log(new Date().toISOString(), JSON.stringify(message)),
  })
  console.log(
    `Listening on ${receiver.url} (${secret === undefined ? 'no WEBHOOK_SECRET: signatures not checked' : 'checking X-Signature'})`,
  )
  process.once('SIGINT', () => receiver.close())
  process.once('SIGTERM', () => receiver.close())
}
