import { log } from '../relay/log'

/**
 * Runs `reload` on each `SIGHUP` (`kill -HUP <pid>`, `systemctl reload`), one after the other:
 * a signal that arrives while a reload runs is served after it, so the last file read wins.
 * `reload` logs its own refusals; whatever it throws is not thrown again here. Returns a function
 * that stops listening (after which SIGHUP is ignored, not fatal, until the process exits).
 */
export function reloadOnHangup(reload: () => Promise<unknown>): () => void {
  let queue: Promise<unknown> = Promise.resolve()
  const onHangup = () => {
    log.info('SIGHUP received: reloading the config file', { event: 'config-reload' })
    queue = queue.then(reload).catch(() => {})
  }
  process.on('SIGHUP', onHangup)
  return () => {
    process.off('SIGHUP', onHangup)
    // A hangup while the relay closes must not kill it before it has closed.
    process.on('SIGHUP', () => {})
  }
}
