import type { Batching, DestinationSender, MessageOutcome, OutboundMessage } from '../destinations/destination'

/**
 * Gathers the messages of one route (source → destination) into batches for its sender: up to
 * `batching.maxMessages`, waiting at most `batching.maxWaitMs` after the first, then one
 * `sendBatch`. Each message's promise resolves to its own outcome; none ever rejects.
 */
export class Batcher {
  readonly #sender: DestinationSender
  readonly #targets: readonly string[] | undefined
  readonly #batching: Batching
  /** The messages waiting for the batch to go, each with where its outcome goes. */
  #waiting: { message: OutboundMessage; settle: (outcome: MessageOutcome) => void }[] = []
  #timer: NodeJS.Timeout | undefined
  /** Told once the batch has gone (no more messages may join it). */
  readonly #gone: () => void

  constructor(sender: DestinationSender, targets: readonly string[] | undefined, gone: () => void) {
    this.#sender = sender
    this.#targets = targets
    this.#batching = sender.batching
    this.#gone = gone
  }

  /** Whether another message may join (the batch has not gone and has room). */
  get open(): boolean {
    return this.#waiting.length > 0 && this.#waiting.length < this.#batching.maxMessages
  }

  /** Adds a message; the batch goes once full, or once the first has waited `maxWaitMs`. */
  add(message: OutboundMessage): Promise<MessageOutcome> {
    return new Promise((settle) => {
      this.#waiting.push({ message, settle })
      if (this.#waiting.length >= this.#batching.maxMessages || this.#batching.maxWaitMs <= 0) this.flush()
      else if (this.#timer === undefined) {
        this.#timer = setTimeout(() => this.flush(), this.#batching.maxWaitMs)
        // A gathering batch never keeps the process up by itself.
        this.#timer.unref()
      }
    })
  }

  /** Sends what is waiting now (closing, or the wait is over). */
  flush(): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
    const batch = this.#waiting
    this.#waiting = []
    if (batch.length === 0) return
    this.#gone()
    const options = this.#targets === undefined ? undefined : { targets: this.#targets }
    const messages = batch.map((w) => w.message)
    const sent = options === undefined ? this.#sender.sendBatch(messages) : this.#sender.sendBatch(messages, options)
    sent.then(
      (outcomes) => {
        for (const [i, w] of batch.entries()) w.settle(outcomes[i] ?? missing(outcomes.length, batch.length))
      },
      (error: unknown) => {
        // The contract says never; should a sender break it, each message is a retryable failure.
        const failed: MessageOutcome = {
          kind: 'failed',
          retryable: true,
          error: `the destination failed on the batch: ${(error as Error)?.message ?? String(error)}`,
        }
        for (const w of batch) w.settle(failed)
      },
    )
  }
}

function missing(got: number, sent: number): MessageOutcome {
  return {
    kind: 'failed',
    retryable: true,
    error: `the destination answered ${got} outcomes for a batch of ${sent}`,
  }
}
