import type { Batch } from '../batch'
import type { WrittenBody } from './body-writer'

const encoder = new TextEncoder()
const nothing = (): void => {}

/** Writes request bodies with `TextEncoder`, for the builds without Node's `Buffer`; nothing is reused. */
export class BodyWriter {
  // Same signature as the Node writer's (`keep`: buffers kept for reuse), which this one never needs.
  // biome-ignore lint/complexity/noUselessConstructor: the Node build's BodyWriter takes `keep`
  constructor(_keep: number) {}

  write(batch: Batch): WrittenBody {
    return { bytes: encoder.encode(batch.body()), release: nothing }
  }
}
