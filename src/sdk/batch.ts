import { MAX_BATCH_BYTES } from '../shared/limits'
import type { MessageCallback } from './types'

/** A message accepted at the call: serialised once, measured once. */
export interface QueuedMessage {
  /** The message's JSON: the snapshot taken at the call, sent as is. */
  readonly json: string
  /** UTF-8 bytes of `json`. */
  readonly bytes: number
  readonly callback: MessageCallback | undefined
}

// `{"batch":[` + messages joined by `,` + `],"sentAt":"<24-character ISO time>"}`
const BODY_OPEN = '{"batch":['
const SENT_AT_LENGTH = '2026-01-01T00:00:00.000Z'.length
const COMMA = 0x2c
const BODY_OVERHEAD = BODY_OPEN.length + '],"sentAt":""}'.length + SENT_AT_LENGTH

/** Why a message did not fit. */
export type AddResult = 'added' | 'full-count' | 'full-bytes'

/**
 * A batch of messages for one request. It enforces its count and the request body's byte limit
 * and says so instead of throwing; the body is built by joining the messages' JSON, never by
 * serialising them again.
 */
export class Batch {
  /** The messages, in call order. */
  readonly messages: QueuedMessage[] = []
  /** Most messages this batch takes. */
  readonly #maxCount: number
  /** Most bytes its request body may have. */
  readonly #maxBytes: number
  /** The body's size with the messages so far. */
  #bodyBytes = BODY_OVERHEAD

  constructor(maxCount: number, maxBytes = MAX_BATCH_BYTES) {
    this.#maxCount = maxCount
    this.#maxBytes = maxBytes
  }

  get count(): number {
    return this.messages.length
  }

  /** Bytes of the request body this batch makes (at any `sentAt`). */
  get bodyBytes(): number {
    return this.#bodyBytes
  }

  get isFull(): boolean {
    return this.messages.length >= this.#maxCount
  }

  /** Adds `message` if it fits both limits. A batch always takes its first message. */
  add(message: QueuedMessage): AddResult {
    if (this.messages.length >= this.#maxCount) return 'full-count'
    const separator = this.messages.length === 0 ? 0 : 1
    const bodyBytes = this.#bodyBytes + separator + message.bytes
    if (bodyBytes > this.#maxBytes && this.messages.length > 0) return 'full-bytes'
    this.messages.push(message)
    this.#bodyBytes = bodyBytes
    return 'added'
  }

  /** The request body as text, `{"batch":[...],"sentAt":"..."}`: what `encodeBody` writes. */
  body(sentAt: Date = new Date()): string {
    const messages = this.messages.map((message) => message.json).join(',')
    return `${BODY_OPEN}${messages}],"sentAt":"${sentAt.toISOString()}"}`
  }

  /**
   * The same body as `body()`, written as UTF-8 into `target` (at least `bodyBytes` long);
   * returns the part of `target` it fills. Each message's JSON is copied in as is: encoding
   * straight into a reused buffer spares the joined string and a fresh buffer per request.
   */
  encodeBody(target: Buffer, sentAt: Date = new Date()): Buffer {
    let offset = target.write(BODY_OPEN, 0, 'latin1')
    const { messages } = this
    for (let i = 0; i < messages.length; i++) {
      const { json, bytes } = messages[i]!
      if (i > 0) target[offset++] = COMMA
      // As many bytes as characters means pure ASCII: a plain copy, no UTF-8 encoding needed.
      offset += bytes === json.length ? target.write(json, offset, 'latin1') : target.write(json, offset, 'utf8')
    }
    offset += target.write(`],"sentAt":"${sentAt.toISOString()}"}`, offset, 'latin1')
    return target.subarray(0, offset)
  }

  /** Two batches with the first and second half of the messages (for a 413 answer). */
  split(): [Batch, Batch] {
    const middle = Math.ceil(this.messages.length / 2)
    return [
      Batch.of(this.messages.slice(0, middle), this.#maxBytes),
      Batch.of(this.messages.slice(middle), this.#maxBytes),
    ]
  }

  static of(messages: readonly QueuedMessage[], maxBytes = MAX_BATCH_BYTES): Batch {
    const batch = new Batch(messages.length, maxBytes)
    for (const message of messages) batch.add(message)
    return batch
  }
}
