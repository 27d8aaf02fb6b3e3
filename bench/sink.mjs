// The benchmark's receiving end, in its own process so that its CPU is not the client's:
// answers every POST with 200 at once and counts what arrived. Driven by its parent over IPC:
// `{ cmd: 'reset' }` and `{ cmd: 'report' }`; it announces `{ port }` once listening.
import { createServer } from 'node:http'
import { gunzipSync } from 'node:zlib'

let counts
function reset() {
  // bodyBytes: as sent over the wire; maxBodyBytes: the largest body once decoded (the limit's measure).
  counts = { requests: 0, events: 0, bodyBytes: 0, maxBodyBytes: 0, notBatches: 0, messageIds: new Set() }
}
reset()

const server = createServer((req, res) => {
  const chunks = []
  req.on('data', (chunk) => chunks.push(chunk))
  req.on('end', () => {
    const wire = Buffer.concat(chunks)
    counts.requests += 1
    counts.bodyBytes += wire.length
    let batch
    try {
      const body = req.headers['content-encoding'] === 'gzip' ? gunzipSync(wire) : wire
      counts.maxBodyBytes = Math.max(counts.maxBodyBytes, body.length)
      batch = JSON.parse(body.toString('utf8')).batch
    } catch {
      batch = undefined
    }
    if (!Array.isArray(batch)) {
      counts.notBatches += 1
    } else {
      counts.events += batch.length
      for (const message of batch) counts.messageIds.add(message.messageId)
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': 2 }).end('{}')
  })
})
server.keepAliveTimeout = 60_000

server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }))

process.on('message', ({ cmd }) => {
  if (cmd === 'reset') {
    reset()
    process.send({ reset: true })
  } else if (cmd === 'report') {
    const { messageIds, ...rest } = counts
    process.send({ report: { ...rest, uniqueMessageIds: messageIds.size } })
  }
})
// The parent going away (or asking) ends the sink.
process.on('disconnect', () => {
  server.closeAllConnections()
  server.close()
})
