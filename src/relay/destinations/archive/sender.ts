import { RETRY_WINDOW_MS, type RetryState, nextAttemptAt } from '../../../webhooks/index'
import { encodeFile } from './codec'
import { type Hour, fileKey, hourOf } from './layout'
import { type ArchiveSettings, archiveTarget } from './settings'
import { type ArchiveStore, ArchiveStoreError, type FileMeta } from './store'
import type { DestinationSender, MessageOutcome, OutboundMessage, RetryPolicy } from './types'

/** A file the archive has made durable: for the metrics and the page. */
export interface WrittenFile extends FileMeta {
  source: string
  key: string
  bytes: number
}

/** What an archive sender needs beside its settings. */
export interface ArchiveSenderOptions {
  source: string
  /** Unique per relay process: with the outbox ids, it keeps file names from colliding. */
  relayId: string
  store: ArchiveStore
  /** The prefix of every key (`''` in a folder). */
  prefix: string
  /** Told of each file once it is durable. */
  onFile?: (file: WrittenFile) => void
}

/** The platform's retry rule: doubling waits from 1 s to 10 min, within 4 hours. */
const RETRIES: RetryPolicy = Object.freeze({
  schedule: (state: RetryState) => nextAttemptAt(state),
  window: RETRY_WINDOW_MS,
})

/**
 * One source's archive: each batch becomes one file per hour of receipt (UTC), and each message's
 * outcome is `delivered` once its file is durable. Never rejects: a store that is down or full is
 * a retryable failure of each message of the file, with the reason.
 */
export class ArchiveSender implements DestinationSender {
  readonly targets: readonly string[]
  readonly batching: { maxMessages: number; maxWaitMs: number }
  readonly retries = RETRIES
  readonly #settings: ArchiveSettings
  readonly #options: ArchiveSenderOptions

  constructor(settings: ArchiveSettings, options: ArchiveSenderOptions) {
    this.#settings = settings
    this.#options = options
    this.targets = Object.freeze([archiveTarget(settings)])
    this.batching = Object.freeze({
      maxMessages: settings.maxFileMessages,
      maxWaitMs: settings.maxFileSeconds * 1000,
    })
  }

  async sendBatch(batch: readonly OutboundMessage[]): Promise<readonly MessageOutcome[]> {
    const outcomes: MessageOutcome[] = new Array(batch.length)
    const target = this.targets[0]!
    const { hours, invalid } = byHour(batch)
    for (const index of invalid) {
      const error = `receivedAt is not a time: ${JSON.stringify(batch[index]!.receivedAt)}`
      outcomes[index] = { kind: 'failed', retryable: false, error, target }
    }
    for (const [hour, indexes] of hours) {
      const files = indexes.map((index) => batch[index]!)
      const outcome = await this.#write(hour, files)
      // The file's size and count go with its first message only, so a metrics reader counts each
      // file once; every message says which file holds it.
      const rest: MessageOutcome =
        outcome.kind === 'delivered' ? { ...outcome, detail: { file: outcome.detail?.['file'] } } : outcome
      indexes.forEach((index, n) => {
        outcomes[index] = n === 0 ? outcome : rest
      })
    }
    return outcomes
  }

  async #write(hour: Hour, batch: readonly OutboundMessage[]): Promise<MessageOutcome> {
    const target = this.targets[0]!
    let body: Uint8Array
    try {
      body = await encodeFile(this.#settings.format, batch)
    } catch (error) {
      // A message that cannot be written never will be: retrying would not help.
      return { kind: 'failed', retryable: false, error: `the archive could not encode: ${message(error)}`, target }
    }
    const ids = span(batch.map((one) => one.deliveryId))
    const times = span(batch.map((one) => Date.parse(one.receivedAt)))
    const name = { relay: this.#options.relayId, first: ids.min, last: ids.max, format: this.#settings.format }
    const key = fileKey(this.#options.prefix, this.#options.source, hour, name)
    const meta: FileMeta = {
      messages: batch.length,
      first: new Date(times.min).toISOString(),
      last: new Date(times.max).toISOString(),
    }
    try {
      await this.#options.store.put(key, body, meta)
    } catch (error) {
      const retryable = error instanceof ArchiveStoreError ? error.retryable : true
      return { kind: 'failed', retryable, error: message(error), target }
    }
    this.#options.onFile?.({ ...meta, source: this.#options.source, key, bytes: body.byteLength })
    return { kind: 'delivered', target, detail: { file: key, messages: batch.length, bytes: body.byteLength } }
  }

  async close(): Promise<void> {
    await this.#options.store.close()
  }
}

/** The batch's indexes by hour of receipt, in the order hours first appear; those with no time. */
function byHour(batch: readonly OutboundMessage[]): { hours: Map<Hour, number[]>; invalid: number[] } {
  // Keyed by the hour's number since the epoch: one Date.parse a message, one Hour a group.
  const groups = new Map<number, number[]>()
  const invalid: number[] = []
  batch.forEach((one, index) => {
    const ms = Date.parse(one.receivedAt)
    if (!Number.isFinite(ms)) {
      invalid.push(index)
      return
    }
    const hour = Math.floor(ms / 3_600_000)
    const group = groups.get(hour)
    if (group) group.push(index)
    else groups.set(hour, [index])
  })
  const hours = new Map([...groups].map(([hour, indexes]) => [hourOf(hour * 3_600_000), indexes]))
  return { hours, invalid }
}

/** The least and greatest of numbers (a loop: a spread of 100,000 arguments overflows the stack). */
function span(values: readonly number[]): { min: number; max: number } {
  let min = Number.POSITIVE_INFINITY
  let max = Number.NEGATIVE_INFINITY
  for (const value of values) {
    if (value < min) min = value
    if (value > max) max = value
  }
  return { min, max }
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
