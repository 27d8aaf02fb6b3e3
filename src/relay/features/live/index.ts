import type { DeliverableMessage } from '../../../shared/message'
import type { AlertsOptions } from '../../config/alerts-option'
import type { ResolvedRelayOptions } from '../../config/options'
import type { ConsoleKit } from '../../console/page/operation-routes'
import type { RelayEvent } from '../../events/kinds'
import type { AdminToken } from '../../http/auth'
import type { AuthLimiter } from '../../http/auth-limiter'
import { log } from '../../log'
import type { SourceRegistry } from '../../sources/source-registry'
import type { AlertClaimStore } from '../../store/alert-claims'
import type { Notifications } from '../../store/notifications/channel'
import type { Feature } from '../feature'
import { AlertSender } from './alerts/alert-sender'
import { liveRoutes } from './page/live-routes'
import { StreamFanIn } from './stream/fan-in'
import { LiveStream } from './stream/live-stream'
import { publishAttempt, publishRequestRefused, streamIngestTap } from './stream/publishers'
import { streamRoutes } from './stream/routes'
import { publishViolations } from './stream/violation-events'

/** What the live view and the alerts need from the relay. */
export interface LiveDeps {
  /** `streamReaders`; `alerts` (where alerts go, if anywhere) as the relay started. */
  options: Pick<ResolvedRelayOptions, 'streamReaders' | 'alerts'>
  /** The sources now, the file's and the admin API's: names, and how `forward` formats. */
  registry: Pick<SourceRegistry, 'all'>
  /** Which relay sends an alert: a claim in the store, so several relays send it once. */
  alertClaims: AlertClaimStore
  /** The relay's notification channel: on PostgreSQL, every relay's events reach every stream. */
  notifications: Notifications
  /** Whether the stream fans in from the other relays (only a PostgreSQL store is shared so). */
  fanIn: boolean
  adminToken: AdminToken
  authLimiter: AuthLimiter
  /** The operator page's kit: the live view reads the stream with the page's session. */
  page: ConsoleKit
  /** A message as its Webhooks destination would format it, after its function (`forward`). */
  beforeFormatting: (source: string, message: DeliverableMessage) => Promise<DeliverableMessage | undefined>
}

/**
 * The live view and alerts (docs/operations.md, "The live stream", "Alerts"): `GET /v1/stream`
 * and the page's `/ui/live` show what ingest and delivery do as it happens, fanned in from every
 * relay on a PostgreSQL store; dead letters and circuits changing are sent to the `alerts` URL.
 * It reads the relay's events and taps ingest; a reload replaces where alerts go.
 */
export function liveFeature(deps: LiveDeps): Feature {
  const live = new LiveStream({ maxReaders: deps.options.streamReaders })
  const fanIn = deps.fanIn ? new StreamFanIn(live, deps.notifications) : undefined
  const senderOf = (options: AlertsOptions | undefined) =>
    options === undefined ? undefined : new AlertSender(options, { claims: deps.alertClaims })
  let alerts = senderOf(deps.options.alerts)
  const sources = () => deps.registry.all().map((source) => source.settings)
  const webhooksOf = (name: string) => sources().find((s) => s.name === name)?.destinations?.Webhooks
  const { sessions } = deps.page
  return {
    name: 'live',
    routes: streamRoutes({
      live,
      adminToken: deps.adminToken,
      authLimiter: deps.authLimiter,
      sourceNames: () => sources().map((source) => source.name),
      hasSession: async (req) => (await sessions.find(req.headers.cookie).catch(() => undefined)) !== undefined,
    }),
    page: { title: 'Live', path: '/ui/live', routes: liveRoutes(deps.page) },
    readers: [(event) => tell(live, alerts, event)],
    ingestTap: streamIngestTap(live, webhooksOf, deps.beforeFormatting),
    reload: {
      prepare: async (options) => ({
        commit: () => {
          // What the old sender still held is dropped: it was bound for an address replaced.
          alerts?.stop()
          alerts = senderOf(options.alerts)
        },
        discard: async () => {},
      }),
    },
    start: () => {
      fanIn?.start().catch((error: unknown) => {
        const text = `live stream: other relays' events will not reach this relay: ${(error as Error).message}`
        log.warn(text, { event: 'stream-fan-in-failed' })
      })
    },
    stop: async () => {
      await fanIn?.stop().catch(() => undefined)
      live.close()
      alerts?.stop()
    },
  }
}

// What each event adds to the live stream and the alerts: attempts (dead letters alert), and
// requests refused whole (per-message events come through the ingest tap).
function tell(live: LiveStream, alerts: AlertSender | undefined, event: RelayEvent): void {
  try {
    if (event.type === 'refused') publishRequestRefused(live, event.error)
    if (event.type === 'violation') publishViolations(live, event.violations)
    if (event.type === 'circuit') alerts?.circuitChanged(event)
    if (event.type !== 'attempt') return
    publishAttempt(live, event.attempt)
    alerts?.attemptSettled(event.attempt)
  } catch (error) {
    log.error(`live stream: could not publish an event: ${(error as Error).message}`, { event: 'internal-error' })
  }
}
