import { describe, expect, it } from 'vitest'
import { MAX_BATCH_BYTES } from '../../src/shared/limits'
import { Batch, type QueuedMessage } from '../../src/sdk/batch'

function queued(json: string): QueuedMessage {
  return { json, bytes: Buffer.byteLength(json), callback: undefined }
}

/** A message whose JSON is exactly `bytes` bytes. */
function ofBytes(bytes: number, char = 'a'): QueuedMessage {
  return queued(`"${char.repeat(bytes - 2)}"`)
}

describe('Batch', () => {
  it('builds the body by joining the messages, and measures it exactly', () => {
    const batch = new Batch(10)
    batch.add(queued('{"a":1}'))
    batch.add(queued('{"b":"é"}'))
    const body = batch.body(new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678)))
    expect(body).toBe('{"batch":[{"a":1},{"b":"é"}],"sentAt":"2026-01-02T03:04:05.678Z"}')
    expect(JSON.parse(body)).toEqual({ batch: [{ a: 1 }, { b: 'é' }], sentAt: '2026-01-02T03:04:05.678Z' })
    expect(batch.bodyBytes).toBe(Buffer.byteLength(body))
  })

  it('encodes the same body as UTF-8 bytes into a used buffer, ASCII and multi-byte alike', () => {
    const batch = new Batch(10)
    for (const json of ['{"a":1}', '{"b":"é€😀"}', '{"c":"plain"}']) batch.add(queued(json))
    const sentAt = new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678))
    // A buffer that held a longer body before: nothing of it may show through.
    const target = Buffer.alloc(1000, 'x')
    const body = batch.encodeBody(target, sentAt)
    expect(body.toString('utf8')).toBe(batch.body(sentAt))
    expect(body.length).toBe(batch.bodyBytes)
    expect(body.buffer).toBe(target.buffer)
  })

  it('takes at most its count', () => {
    const batch = new Batch(2)
    expect(batch.add(queued('1'))).toBe('added')
    expect(batch.isFull).toBe(false)
    expect(batch.add(queued('2'))).toBe('added')
    expect(batch.isFull).toBe(true)
    expect(batch.add(queued('3'))).toBe('full-count')
    expect(batch.count).toBe(2)
  })

  it('fills the body up to exactly 500,000 bytes and not one byte more', () => {
    const batch = new Batch(1000)
    const message = ofBytes(31_000)
    while (batch.add(message) === 'added');
    const room = MAX_BATCH_BYTES - batch.bodyBytes
    // The last message fits to the byte: separator plus `room - 1` bytes of JSON.
    expect(batch.add(ofBytes(room))).toBe('full-bytes')
    expect(batch.add(ofBytes(room - 1))).toBe('added')
    expect(batch.bodyBytes).toBe(MAX_BATCH_BYTES)
    expect(Buffer.byteLength(batch.body())).toBe(MAX_BATCH_BYTES)
  })

  it('counts bytes, not characters, of multi-byte text', () => {
    const batch = new Batch(100, 100)
    // 30 × "€" is 90 bytes of UTF-8 but 30 characters.
    expect(batch.add(queued(`"${'€'.repeat(30)}"`))).toBe('added')
    expect(batch.add(queued('"x"'))).toBe('full-bytes')
  })

  it('splits in two halves that keep the order', () => {
    const messages = ['1', '2', '3', '4', '5'].map(queued)
    const [first, second] = Batch.of(messages).split()
    expect(first.messages).toEqual(messages.slice(0, 3))
    expect(second.messages).toEqual(messages.slice(3))
  })
})
