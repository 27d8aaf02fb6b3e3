import type { Batch } from '../batch'
import type { WrittenBody } from './body-writer'

const encoder = new TextEncoder()
const nothing = (): void => {}

/** Writes request bodies with `TextEncoder`, for the builds without Node's `Buffer`; nothing is reused. */
export class BodyWriter {
  constructor(_keep: number) {}

  write(batch: Batch): WrittenBody {
    return { bytes: encoder.encode(batch.body()), release: nothing }
  }
}
