import { afterEach, beforeEach } from 'vitest'

/** Anything a test starts and must close: a relay, a receiver, a server. */
export interface Closable {
  close(): Promise<void> | void
}

/** A test's receiver and the relays it starts, closed after each test. */
export interface Scaffold<R extends Closable> {
  /** The current test's receiver, started before it. */
  readonly receiver: R
  /** `relay`, kept to be closed after the test, before the receiver. */
  keep<T extends Closable>(relay: T): T
  /** Closes the relays kept so far, in the order started (a test that restarts them on one store). */
  closeRelays(): Promise<void>
}

/**
 * The "receiver + relays + afterEach" of the relay's tests, once: before each test a receiver is
 * started (`startReceiver`), and after it every relay it kept is closed, then the receiver, each
 * even when one before it fails to close.
 */
export function useScaffold<R extends Closable>(startReceiver: () => Promise<R>): Scaffold<R> {
  let receiver: R | undefined
  let relays: Closable[] = []
  const closeRelays = async (): Promise<void> => {
    const closing = relays
    relays = []
    const results = await Promise.allSettled(closing.map(async (relay) => relay.close()))
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
    if (failed !== undefined) throw failed.reason
  }
  beforeEach(async () => {
    receiver = await startReceiver()
  })
  afterEach(async () => {
    try {
      await closeRelays()
    } finally {
      await receiver?.close()
      receiver = undefined
    }
  })
  return {
    get receiver() {
      if (receiver === undefined) throw new Error('the scaffold’s receiver starts before each test')
      return receiver
    },
    keep: (relay) => {
      relays.push(relay)
      return relay
    },
    closeRelays,
  }
}
