import cluster, { type Worker } from 'node:cluster'
import type { RelayOptions } from '../../relay/index'
import { log } from '../../relay/log'
import { EXIT_OK } from '../exit-codes'
import { PoolFigures } from './figures'
import {
  isGatherMessage,
  isListeningMessage,
  isReadyMessage,
  isReportedMessage,
  type ReloadMessage,
  type StartMessage,
} from './messages'
import { RestartBackoff } from './restart-backoff'

/**
 * Set in each worker's environment (its worker number): the command runs as a worker only with
 * it, not merely because it finds itself in some other program's cluster.
 */
export const WORKER_ENV = 'TRACKLET_RELAY_WORKER'

/** How the primary of `tracklet relay --workers N` ended. */
export type PoolEnd =
  /** Stopped by SIGINT/SIGTERM: `clean` when every worker closed and exited 0. */
  | { kind: 'stopped'; signal: NodeJS.Signals; clean: boolean }
  /** A worker of the first start exited before it listened (its own error is on stderr). */
  | { kind: 'start-failed'; worker: number; code: number | null; signal: string | null }

/** What the primary reports while it runs. */
export interface PoolEvents {
  /** Every worker of the first start listens, at `url` (the port they share). */
  listening(url: string): void
  /** A stop signal arrived; the workers are closing. */
  stopping(signal: NodeJS.Signals): void
  /**
   * SIGHUP arrived: the options to pass on to every worker (and to start later ones with), given
   * those running now; `undefined` when the reload is refused (the reason logged).
   */
  reload(running: RelayOptions): Promise<RelayOptions | undefined>
}

/** One of the N places: its worker number stays while the processes in it come and go. */
interface Slot {
  readonly number: number
  worker: Worker | undefined
  /** Whether a process in this slot has ever listened: before that, a death is a failed start. */
  started: boolean
  /** Whether its current process was sent the options (then it is sent each reload too). */
  sentOptions: boolean
  readonly backoff: RestartBackoff
  restartTimer: NodeJS.Timeout | undefined
}

/**
 * The primary of `tracklet relay --workers N`: forks `count` workers (node:cluster; they share the
 * listening socket, and the primary hands each connection to one of them in turn), sends each the
 * options, restarts one that dies unexpectedly after a back-off (so a crash loop cannot spin), on
 * SIGHUP passes a reload of the config on to every worker (one started later gets the reloaded
 * options), and on SIGINT or SIGTERM stops them all and waits for every one to exit.
 *
 * The primary opens no store and serves no request: each worker is a relay of its own on the
 * shared store, as separate relays on one database are.
 */
export function runWorkerPool(count: number, options: RelayOptions, events: PoolEvents): Promise<PoolEnd> {
  return new Promise((resolve) => {
    const slots: Slot[] = Array.from({ length: count }, (_, index) => ({
      number: index + 1,
      worker: undefined,
      started: false,
      sentOptions: false,
      backoff: new RestartBackoff(),
      restartTimer: undefined,
    }))
    // The options a worker starts with: the file's, then each reload's.
    let running = options
    let ending: { signal: NodeJS.Signals; clean: boolean } | { failed: PoolEnd } | undefined
    // /metrics and the operator page's rates: every worker's figures, added up here.
    const figures = new PoolFigures(() => slots)

    const finishIfAllExited = () => {
      if (ending === undefined || slots.some((slot) => slot.worker !== undefined)) return
      process.off('SIGINT', onSignal).off('SIGTERM', onSignal).off('SIGHUP', onHangup)
      resolve('failed' in ending ? ending.failed : { kind: 'stopped', ...ending })
    }

    const stopAll = (signal: NodeJS.Signals) => {
      for (const slot of slots) {
        clearTimeout(slot.restartTimer)
        slot.worker?.process.kill(signal)
      }
    }

    const fork = (slot: Slot) => {
      slot.restartTimer = undefined
      // Structured clone, not JSON: a metric's NaN (a clock offset not yet measured) stays NaN.
      cluster.setupPrimary({ serialization: 'advanced' })
      const worker = cluster.fork({ [WORKER_ENV]: String(slot.number) })
      slot.worker = worker
      slot.sentOptions = false
      const pid = worker.process.pid
      worker.on('message', (message: unknown) => {
        if (isReadyMessage(message)) {
          worker.send({ kind: 'tracklet-relay-start', options: running } satisfies StartMessage)
          slot.sentOptions = true
        }
        if (isGatherMessage(message) || isReportedMessage(message)) figures.received(slot.number, message)
        if (!isListeningMessage(message)) return
        slot.backoff.started()
        if (slot.started) {
          log.info(`worker ${slot.number} restarted (pid ${pid})`, {
            event: 'worker-restarted',
            worker: slot.number,
            pid,
          })
          return
        }
        slot.started = true
        log.info(`worker ${slot.number} listening (pid ${pid})`, {
          event: 'worker-listening',
          worker: slot.number,
          pid,
        })
        if (slots.every((s) => s.started)) events.listening(message.url)
      })
      worker.on('exit', (code, signal) => {
        slot.worker = undefined
        void figures.retire(slot.number)
        const how = signal === null ? `exit code ${code}` : signal
        if (ending !== undefined) {
          if ('signal' in ending && code !== EXIT_OK) ending.clean = false
          return finishIfAllExited()
        }
        if (!slot.started) {
          // A worker that cannot start now would not start at the next attempt either (the port
          // is taken, the store refuses): stop, rather than restart it for ever.
          log.error(`worker ${slot.number} (pid ${pid}) exited before it listened (${how}): stopping`, {
            event: 'worker-start-failed',
            worker: slot.number,
            pid,
          })
          ending = { failed: { kind: 'start-failed', worker: slot.number, code, signal } }
          stopAll('SIGTERM')
          return finishIfAllExited()
        }
        const delay = slot.backoff.next()
        log.warn(`worker ${slot.number} (pid ${pid}) died (${how}): restarting in ${delay} ms`, {
          event: 'worker-died',
          worker: slot.number,
          pid,
          code,
          signal,
          ms: delay,
        })
        slot.restartTimer = setTimeout(() => fork(slot), delay)
      })
    }

    function onSignal(signal: NodeJS.Signals) {
      if (ending !== undefined) return
      ending = { signal, clean: true }
      events.stopping(signal)
      stopAll(signal)
      finishIfAllExited()
    }
    // Reloads one after the other, so the last file read is the one every worker ends with.
    let reloads: Promise<unknown> = Promise.resolve()
    function onHangup() {
      if (ending !== undefined) return
      log.info('SIGHUP received: reloading the config file', { event: 'config-reload' })
      reloads = reloads.then(async () => {
        const next = await events.reload(running)
        if (next === undefined || ending !== undefined) return
        running = next
        const message: ReloadMessage = { kind: 'tracklet-relay-reload', options: next }
        for (const slot of slots) if (slot.sentOptions && slot.worker?.isConnected()) slot.worker.send(message)
      })
    }
    process.on('SIGINT', onSignal).on('SIGTERM', onSignal).on('SIGHUP', onHangup)
    for (const slot of slots) fork(slot)
  })
}
