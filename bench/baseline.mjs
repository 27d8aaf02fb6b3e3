// The benchmark's baseline: what a careful hand-written sender costs. Each event is built into
// its wire message and JSON.stringify'd once, packed into bodies of at most 500,000 bytes, and
// POSTed with undici keep-alive, a few requests in flight.
import { readFileSync } from 'node:fs'
import { Agent, request } from 'undici'
import { WRITE_KEY, toWireMessage } from './events.mjs'

const MAX_BODY_BYTES = 500_000
/** Requests in flight at once. */
const IN_FLIGHT = 4
// The same context.library as the SDK sends, so that both variants send the same bytes.
const { name, version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
const LIBRARY = { name, version }
// `{"batch":[` + `],"sentAt":"2026-01-01T00:00:00.000Z"}`, with room to spare.
const ENVELOPE_BYTES = 64

/**
 * `maxPerBody` caps the events per body (the `--diagnose` rows: a hand-written sender making as
 * many requests as the SDK does); by default only the byte limit packs them.
 */
export function startBaseline(endpoint, maxPerBody = Infinity) {
  const url = new URL('/v1/batch', endpoint)
  const agent = new Agent({ connections: IN_FLIGHT, keepAliveTimeout: 30_000 })
  const headers = {
    'content-type': 'application/json',
    authorization: `Basic ${Buffer.from(`${WRITE_KEY}:`).toString('base64')}`,
    'user-agent': 'tracklet-bench-baseline',
  }

  /** Bodies packed and waiting for a free request slot: arrays of message JSON strings. */
  const ready = []
  let packing = []
  let packingBytes = ENVELOPE_BYTES
  let inFlight = 0
  let made = 0
  let delivered = 0
  let failed = 0
  let drained // resolves finish() once nothing is left

  function send(parts) {
    inFlight += 1
    const body = `{"batch":[${parts.join(',')}],"sentAt":"${new Date().toISOString()}"}`
    request(url, { method: 'POST', body, headers, dispatcher: agent })
      .then(async ({ statusCode, body: answer }) => {
        await answer.dump()
        if (statusCode === 200) delivered += parts.length
        else failed += parts.length
      })
      .catch(() => {
        failed += parts.length
      })
      .finally(() => {
        inFlight -= 1
        pump()
      })
  }

  function pump() {
    while (inFlight < IN_FLIGHT && ready.length > 0) send(ready.shift())
    if (drained !== undefined && inFlight === 0 && ready.length === 0) drained()
  }

  return {
    label: maxPerBody === Infinity ? 'baseline' : `baseline (${maxPerBody} per body)`,
    call(event) {
      const json = JSON.stringify(toWireMessage(event, LIBRARY))
      const bytes = Buffer.byteLength(json)
      if (packingBytes + bytes + 1 > MAX_BODY_BYTES || packing.length === maxPerBody) {
        ready.push(packing)
        packing = []
        packingBytes = ENVELOPE_BYTES
      }
      packing.push(json)
      packingBytes += bytes + 1
      made += 1
    },
    afterBurst: pump,
    outstanding: () => made - delivered - failed,
    async finish() {
      if (packing.length > 0) ready.push(packing)
      packing = []
      await new Promise((resolve) => {
        drained = resolve
        pump()
      })
      await agent.close()
    },
    delivered: () => delivered,
    failed: () => failed,
  }
}
