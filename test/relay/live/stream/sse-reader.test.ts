import { EventEmitter } from 'node:events'
import type { ServerResponse } from 'node:http'
import { describe, expect, it } from 'vitest'
import { SseReader, sseFrame } from '../../../../src/relay/features/live/stream/sse-reader'

// A response whose connection takes writes until told it is full, then waits for `drain`, as a
// socket does: what the reader must do with a slow connection, without timing anything.
class SlowResponse extends EventEmitter {
  written: string[] = []
  full = false
  write(chunk: string): boolean {
    this.written.push(chunk)
    return !this.full
  }
  end(): void {
    this.emit('close')
  }
  drain(): void {
    this.full = false
    this.emit('drain')
  }
  events(): { kind: string; data: any }[] {
    return this.written.map((frame) => {
      const [, kind, data] = /^event: (\w+)\ndata: (.*)\n\n$/.exec(frame)!
      return { kind: kind!, data: JSON.parse(data!) }
    })
  }
}

const frame = (n: number) => sseFrame('ingested', { n })

function reader(limitBytes = 1000): { res: SlowResponse; reader: SseReader } {
  const res = new SlowResponse()
  return { res, reader: new SseReader(res as unknown as ServerResponse, limitBytes) }
}

describe('SseReader', () => {
  it('writes each frame as an SSE event whose data is one JSON line', () => {
    const { res, reader: r } = reader()
    r.offer(sseFrame('attempt', { error: 'line one\nline two' }))
    expect(res.written).toEqual(['event: attempt\ndata: {"error":"line one\\nline two"}\n\n'])
  })

  it('queues while the connection is full and sends the queue, in order, once it drains', () => {
    const { res, reader: r } = reader()
    res.full = true
    r.offer(frame(1)) // written; the connection is full from now on
    r.offer(frame(2))
    r.offer(frame(3))
    expect(res.events().map((e) => e.data.n)).toEqual([1])
    res.drain()
    expect(res.events().map((e) => e.data.n)).toEqual([1, 2, 3])
    expect(r.skipped).toBe(0)
  })

  it('skips what is past its limit for this reader and announces the count where they would have been', () => {
    const size = frame(10).length
    const { res, reader: r } = reader(size * 3)
    res.full = true
    for (let n = 10; n < 20; n++) r.offer(frame(n))
    // One written, three queued, six skipped.
    expect(r.skipped).toBe(6)
    res.drain()
    expect(res.events()).toEqual([
      ...[10, 11, 12, 13].map((n) => ({ kind: 'ingested', data: { n } })),
      { kind: 'skipped', data: { count: 6 } },
    ])
    r.offer(frame(20))
    expect(res.events().at(-1)).toEqual({ kind: 'ingested', data: { n: 20 } })
  })

  it('never holds more than its limit, however many events a stalled reader is offered', () => {
    const size = frame(10_000).length
    const { res, reader: r } = reader(size * 100)
    res.full = true
    for (let n = 10_000; n < 30_000; n++) r.offer(frame(n))
    expect(r.skipped).toBe(20_000 - 101)
    res.drain()
    // Everything written: what was written before, then the queue, then the announcement.
    expect(res.events()).toHaveLength(102)
    expect(res.events().at(-1)).toEqual({ kind: 'skipped', data: { count: 19_899 } })
  })

  it('announces a skip that happened while a drain was still not enough, once it catches up', () => {
    const size = frame(10).length
    const { res, reader: r } = reader(size)
    res.full = true
    r.offer(frame(1)) // written
    r.offer(frame(2)) // queued
    r.offer(frame(3)) // skipped
    res.full = true
    res.emit('drain') // frame 2 is written and the connection is full again
    expect(res.events().map((e) => e.kind)).toEqual(['ingested', 'ingested'])
    r.offer(frame(4)) // still congested: skipped too
    res.drain()
    expect(res.events().at(-1)).toEqual({ kind: 'skipped', data: { count: 2 } })
  })

  it('drops everything once the connection is closed', () => {
    const { res, reader: r } = reader()
    res.emit('close')
    r.offer(frame(1))
    expect(res.written).toEqual([])
    expect(r.closed).toBe(true)
  })
})
