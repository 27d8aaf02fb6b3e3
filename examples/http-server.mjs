// A plain node:http server that tracks every request it answers.
//   TRACKLET_WRITE_KEY=… TRACKLET_ENDPOINT=http://localhost:8787 node examples/http-server.mjs
// To keep the example self-contained it makes three requests to itself, then shuts down.
import { createServer } from 'node:http'
import { Analytics } from 'tracklet'

const analytics = new Analytics(process.env.TRACKLET_WRITE_KEY ?? 'YOUR_WRITE_KEY', {
  endpoint: process.env.TRACKLET_ENDPOINT ?? 'https://api.segment.io',
})
// Delivery failures never throw into the server; log them here.
analytics.on('error', (error) => console.error(`analytics: ${error.code}: ${error.message}`))

const server = createServer((req, res) => {
  const started = performance.now()
  res.on('finish', () => {
    analytics.track({
      anonymousId: String(req.headers['x-visitor-id'] ?? 'anonymous'),
      event: 'Request Handled',
      properties: {
        method: req.method,
        path: new URL(req.url ?? '/', 'http://localhost').pathname,
        status: res.statusCode,
        ms: Math.round(performance.now() - started),
      },
    })
  })
  res.writeHead(req.url === '/missing' ? 404 : 200, { 'content-type': 'text/plain' })
  res.end('hello\n')
})

server.listen(0, '127.0.0.1', async () => {
  const { port } = server.address()
  for (const path of ['/', '/pricing', '/missing']) {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { 'x-visitor-id': 'visitor-1' } })
    await response.text()
  }
  // Stop taking requests (once the last response has finished, so it was tracked), then send
  // what is still queued before the process exits.
  await new Promise((resolve) => server.close(resolve))
  await analytics.closeAndFlush({ timeout: 5_000 })
  console.log('http-server: 3 requests tracked')
})
