import cluster from 'node:cluster'
import { once } from 'node:events'
import { startRelay } from '../../relay/relay'
import { EXIT_OK } from '../exit-codes'
import type { Relay, RelayOptions } from '../../relay/index'
import type { RelayFigures, RelayMetrics } from '../../relay/telemetry/metrics'
import { lastHourOf, type MinuteHistory } from '../../relay/telemetry/minute-history'
import {
  type FiguresKind,
  type GatheredMessage,
  type GatherMessage,
  isGatheredMessage,
  isReloadMessage,
  isReportMessage,
  isStartMessage,
  type ListeningMessage,
  type ReadyMessage,
  type ReportedMessage,
} from './messages'

/** How long a worker waits for the primary's figures before /metrics fails, ms. */
const GATHER_TIMEOUT_MS = 10_000

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
  const reloads = followReloads()
  let relay: Relay
  try {
    relay = await startRelay(message.options, {
      sharedByProcesses: true,
      warningsLogged: true,
      listeningAnnounced: true,
      figures: (own, history) => relayFigures(own, history),
    })
  } catch (error) {
    return leave(failed(error))
  }
  process.send?.({ kind: 'tracklet-relay-listening', url: relay.url } satisfies ListeningMessage)
  reloads.relayStarted(relay)
  await stop
  await relay.close()
  return leave(EXIT_OK)
}

/**
 * The reloads the primary passes on (SIGHUP reaches the primary; a hangup of the terminal reaches
 * every process of its group, so a worker ignores it rather than die of it). One that arrives
 * while the relay starts is applied once it runs; each is applied after the one before, and a
 * refused one is logged by the relay (this worker's config stays).
 */
function followReloads(): { relayStarted(relay: Relay): void } {
  process.on('SIGHUP', () => {})
  let relay: Relay | undefined
  let pending: RelayOptions | undefined
  let queue: Promise<unknown> = Promise.resolve()
  const apply = (options: RelayOptions, to: Relay) => {
    queue = queue.then(() => to.reload(options)).catch(() => {})
  }
  process.on('message', (message: unknown) => {
    if (!isReloadMessage(message)) return
    if (relay === undefined) pending = message.options
    else apply(message.options, relay)
  })
  return {
    relayStarted: (started) => {
      relay = started
      if (pending !== undefined) apply(pending, started)
      pending = undefined
    },
  }
}

/**
 * The relay's figures, every worker's together: asked of the primary, which asks each worker for
 * its own (answered here from `own`) and adds them up. One relay's numbers, whichever worker a
 * scrape or the operator page reaches.
 */
function relayFigures(own: RelayMetrics, history: MinuteHistory): RelayFigures {
  let nextId = 0
  const waiting = new Map<number, (answer: GatheredMessage) => void>()
  process.on('message', (message: unknown) => {
    if (isGatheredMessage(message)) waiting.get(message.id)?.(message)
    if (!isReportMessage(message)) return
    const { id, what, storeWide } = message
    const report =
      what === 'rates'
        ? Promise.resolve({ rates: own.recentRates() })
        : what === 'hour'
          ? Promise.resolve({ hour: history.counts() })
          : own.snapshot(storeWide).then((metrics) => ({ metrics }))
    void report.then(
      (figures) => process.send?.({ kind: 'tracklet-relay-reported', id, ...figures } satisfies ReportedMessage),
      (error: Error) =>
        process.send?.({ kind: 'tracklet-relay-reported', id, error: error.message } satisfies ReportedMessage),
    )
  })
  const gather = (what: FiguresKind): Promise<GatheredMessage> => {
    const id = nextId++
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        waiting.delete(id)
        reject(new Error(`the primary did not answer with the relay's ${what} within ${GATHER_TIMEOUT_MS} ms`))
      }, GATHER_TIMEOUT_MS)
      waiting.set(id, (answer) => {
        clearTimeout(timer)
        waiting.delete(id)
        if (answer.error !== undefined) reject(new Error(`the relay's ${what} could not be gathered: ${answer.error}`))
        else resolve(answer)
      })
      process.send?.({ kind: 'tracklet-relay-gather', id, what } satisfies GatherMessage)
    })
  }
  return {
    scrape: async () => (await gather('metrics')).metrics!,
    recentRates: async () => (await gather('rates')).rates!,
    lastHour: async () => lastHourOf((await gather('hour')).hour!, Date.now()),
  }
}

// A cluster worker exits at once when its channel to the primary closes unasked; disconnecting
// first marks the exit as chosen, so the process ends by itself with its exit code.
function leave(code: number): number {
  cluster.worker?.disconnect()
  return code
}
