import type { AnalyticsError, Message, MessageCallback } from '../../../src/index'

export interface Settled {
  err: AnalyticsError | undefined
  message: Message
}

/** A callback and a promise of how it was called; fails the test if it is called twice. */
export function settled(): { callback: MessageCallback; result: Promise<Settled> } {
  let resolve!: (value: Settled) => void
  let calls = 0
  const result = new Promise<Settled>((done) => {
    resolve = done
  })
  return {
    callback: (err, message) => {
      calls++
      if (calls > 1) throw new Error('callback called more than once')
      resolve({ err, message })
    },
    result,
  }
}
