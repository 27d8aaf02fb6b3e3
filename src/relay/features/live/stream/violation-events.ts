import type { Violation } from '../../../store/violations'
import type { LiveStream } from './live-stream'

/** The live stream's `violation` events: one per violation, as `GET /v1/violations` shows it. */
export function publishViolations(live: LiveStream, violations: readonly Violation[]): void {
  if (!live.listening) return
  for (const violation of violations) {
    const { at, source, messageId, type, event, kind, path, message } = violation
    live.publish({
      kind: 'violation',
      data: { at, source, messageId, type, ...(event === undefined ? {} : { event }), kind, path, message },
    })
  }
}
