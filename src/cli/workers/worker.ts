import cluster from 'node:cluster'
import { once } from 'node:events'
import { startRelay } from '../../relay/relay'
import type { Relay } from '../../relay/index'
import { isStartMessage, type ListeningMessage, type ReadyMessage } from './messages'

/**
 * One worker of `tracklet relay --workers N`: waits for the options from the primary, runs a relay
 * on the shared port and store until SIGINT or SIGTERM, then closes it. Returns the exit code
 * (0 closed cleanly, 1 could not start); `failed` prints why it could not start.
 */
export async function runRelayWorker(failed: (error: unknown) => number): Promise<number> {
  // Listened for first: a signal while the worker starts closes it once it is up.
  const stop = new Promise<void>((resolve) => {
    // `on`, not `once`: a terminal's Ctrl-C reaches the worker itself and, forwarded, again from
    // the primary; the second must not kill a worker that is closing.
    process.on('SIGINT', () => resolve())
    process.on('SIGTERM', () => resolve())
  })
  const received = once(process, 'message') as Promise<[unknown]>
  process.send?.({ kind: 'tracklet-relay-ready' } satisfies ReadyMessage)
  const [message] = await received
  if (!isStartMessage(message)) return leave(failed(new Error('the primary sent no options')))
  let relay: Relay
  try {
    relay = await startRelay(message.options, { sharedByProcesses: true, warningsLogged: true })
  } catch (error) {
    return leave(failed(error))
  }
  process.send?.({ kind: 'tracklet-relay-listening', url: relay.url } satisfies ListeningMessage)
  await stop
  await relay.close()
  return leave(0)
}

// A cluster worker exits at once when its channel to the primary closes unasked; disconnecting
// first marks the exit as chosen, so the process ends by itself with its exit code.
function leave(code: number): number {
  cluster.worker?.disconnect()
  return code
}
