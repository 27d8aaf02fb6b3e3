import { request } from 'undici'
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE } from './exit-codes'
import { asksForHelp } from './help'
import { type SseEvent, sseEvents } from './sse-events'
import { parseTailArgs, TAIL_USAGE, type TailArgs } from './tail-args'
import { openStream, reconnectDelay, waitToReconnect } from './tail-connection'

/** Where `tracklet tail` writes, and what stops it (SIGINT in the command; a test's own signal). */
export interface TailIo {
  stdout: { write(text: string): unknown }
  stderr: { write(text: string): unknown }
  signal?: AbortSignal
}

// A forwarded message's request may take this long, ms.
const FORWARD_TIMEOUT_MS = 10_000

/**
 * `tracklet tail`: reads the relay's live stream and prints each event; with `--forward-to`, POSTs
 * each forwarded message to the local URL with the body and signature the relay computed.
 */
export async function runTail(args: readonly string[], io: TailIo = defaultIo()): Promise<number> {
  if (asksForHelp(args)) {
    io.stdout.write(`${TAIL_USAGE}\n`)
    return EXIT_OK
  }
  const parsed = parseTailArgs(args)
  if ('problem' in parsed) {
    io.stderr.write(`tracklet tail: ${parsed.problem}\n\n${TAIL_USAGE}\n`)
    return EXIT_USAGE
  }
  const query = new URLSearchParams()
  if (parsed.forwardTo !== undefined) query.set('forward', parsed.source!)
  else if (parsed.source !== undefined) query.set('source', parsed.source)
  const streamUrl = `${parsed.relay}/v1/stream${query.size > 0 ? `?${query}` : ''}`
  // Forwarded one at a time, in order, while the stream goes on being read.
  let forwarding: Promise<void> = Promise.resolve()
  const onEvent = (event: SseEvent) => {
    print(event, parsed, io)
    const target = parsed.forwardTo
    if (event.event === 'message' && target !== undefined)
      forwarding = forwarding.then(() => forward(event, target, io))
  }
  try {
    return await follow(streamUrl, parsed, io, onEvent)
  } finally {
    await forwarding
  }
}

/**
 * Reads the stream until stopped. Once it was read, a relay that ends it, goes away or answers
 * 5xx (a restart, a deploy) is asked again with a growing wait, said on stderr; what happens
 * meanwhile is not shown (the stream keeps no history). Refused (4xx), or unreachable at first: 1.
 */
async function follow(url: string, args: TailArgs, io: TailIo, onEvent: (event: SseEvent) => void): Promise<number> {
  let connected = false
  let failures = 0
  for (;;) {
    const answer = await openStream(url, args.adminToken, io.signal)
    if (io.signal?.aborted) return EXIT_OK
    let why: string
    if (answer.kind === 'open') {
      const forwarding = args.forwardTo ? `, forwarding to ${args.forwardTo}` : ''
      io.stderr.write(`tracklet tail: ${connected ? 'reconnected to' : 'reading'} ${url}${forwarding}\n`)
      connected = true
      failures = 0
      why = await readEvents(answer.body, onEvent)
      if (io.signal?.aborted) return EXIT_OK
    } else if (answer.kind === 'refused') {
      why = `the relay answered ${answer.status}: ${answer.message}`
      if (!connected || answer.status < 500) {
        io.stderr.write(`tracklet tail: ${why}\n`)
        return EXIT_FAILED
      }
    } else {
      why = `could not reach ${args.relay}: ${answer.message}`
      if (!connected) {
        io.stderr.write(`tracklet tail: ${why}\n`)
        return EXIT_FAILED
      }
    }
    const delay = reconnectDelay(failures++)
    io.stderr.write(`tracklet tail: ${why}; reconnecting in ${delay / 1000} s (events until then are not shown)\n`)
    if (!(await waitToReconnect(delay, io.signal))) return EXIT_OK
  }
}

// Hands each event on until the stream ends; says how it ended.
async function readEvents(body: AsyncIterable<Uint8Array>, onEvent: (event: SseEvent) => void): Promise<string> {
  try {
    for await (const event of sseEvents(body)) onEvent(event)
  } catch (error) {
    return `the stream broke: ${(error as Error).message}`
  }
  return 'the relay ended the stream'
}

function print(event: SseEvent, args: TailArgs, io: TailIo): void {
  let data: Record<string, unknown>
  try {
    data = JSON.parse(event.data) as Record<string, unknown>
  } catch {
    io.stderr.write(`tracklet tail: an event that is not JSON: ${event.data.slice(0, 200)}\n`)
    return
  }
  if (args.json) {
    io.stdout.write(`${JSON.stringify({ kind: event.event, data })}\n`)
    return
  }
  io.stdout.write(`${describe(event.event, data)}\n`)
}

/** One event as a line for a person: time, kind, and the fields that tell what happened. */
export function describe(kind: string, data: Record<string, unknown>): string {
  const time = typeof data['at'] === 'string' ? data['at'].slice(11, 23) : new Date().toISOString().slice(11, 23)
  const field = (name: string) => (data[name] === undefined ? [] : [String(data[name])])
  const quoted = (name: string) => (data[name] === undefined ? [] : [JSON.stringify(data[name])])
  const parts: string[] = (() => {
    switch (kind) {
      case 'ingested':
        return [...field('source'), ...field('messageId'), ...field('type'), ...quoted('event'), ...field('userId')]
      case 'refused':
        return [...field('source'), ...field('messageId'), ...field('kind'), ...quoted('reason')]
      case 'filtered':
        return [...field('source'), ...field('messageId'), ...quoted('reason')]
      case 'attempt':
        return [
          ...field('source'),
          ...field('messageId'),
          `→ ${String(data['url'])}`,
          String(data['outcome']),
          ...field('status'),
          `${String(data['ms'])} ms`,
          ...quoted('error'),
          // A replay's copy (docs/replay.md), marked with its replay.
          ...(data['replay'] === undefined ? [] : [`(replay ${String(data['replay'])})`]),
        ]
      case 'skipped':
        return [`${String(data['count'])} events skipped: this reader was too slow`]
      case 'message':
        return [
          ...field('messageId'),
          `${String(data['body']).length} bytes`,
          data['signature'] ? 'signed' : 'unsigned',
        ]
      default:
        return [JSON.stringify(data)]
    }
  })()
  return [time, kind.padEnd(8), ...parts].join(' ')
}

async function forward(event: SseEvent, target: string, io: TailIo): Promise<void> {
  const message = JSON.parse(event.data) as { messageId: string; body: string; signature?: string }
  try {
    const response = await request(target, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(message.signature === undefined ? {} : { 'x-signature': message.signature }),
      },
      body: message.body,
      headersTimeout: FORWARD_TIMEOUT_MS,
      bodyTimeout: FORWARD_TIMEOUT_MS,
    })
    await response.body.dump()
    io.stderr.write(`tracklet tail: forwarded ${message.messageId} to ${target}: ${response.statusCode}\n`)
  } catch (error) {
    io.stderr.write(`tracklet tail: could not forward ${message.messageId} to ${target}: ${(error as Error).message}\n`)
  }
}

function defaultIo(): TailIo {
  const controller = new AbortController()
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => controller.abort())
  return { stdout: process.stdout, stderr: process.stderr, signal: controller.signal }
}
