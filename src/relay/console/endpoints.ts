import { redactUrl } from '../../shared/redact-url'
import { HttpError } from '../http/http-error'
import { log } from '../log'
import type { EndpointView } from '../store/endpoints'
import type { AdminContext } from './operations'
import { webhookOfId } from './webhook-urls'

/** `GET /v1/endpoints`: every webhook URL the relay sends to, as the endpoints view shows it. */
export async function handleEndpoints(context: AdminContext, now: number): Promise<{ endpoints: EndpointView[] }> {
  const endpoints = [...context.webhooks].map(([url, routes]) => ({ url, routes }))
  return { endpoints: await context.store.endpoints({ endpoints, now }) }
}

/** What pausing or resuming an endpoint answers. */
export interface EndpointChange {
  id: string
  /** By origin and path. */
  url: string
  state: 'paused' | 'closed'
  /** Resume only: the deliveries made due at once. */
  woken?: number
}

/**
 * `POST /v1/endpoints/:id/pause`: no request, and no probe, goes to the URL from any relay until it
 * is resumed; its deliveries wait without losing their retry window.
 */
export async function handlePause(context: AdminContext, id: string, now: number): Promise<EndpointChange> {
  const { url } = webhookOfId(context.webhooks, id)
  await context.store.circuits.pause(url, now)
  await context.circuitChanged?.(url)
  log.info(`endpoint ${redactUrl(url)} paused by an operator`, { event: 'endpoint-paused', url: redactUrl(url) })
  return { id, url: redactUrl(url), state: 'paused' }
}

/** `POST /v1/endpoints/:id/resume`: the URL's circuit closes and its waiting deliveries are due at once. */
export async function handleResume(context: AdminContext, id: string, now: number): Promise<EndpointChange> {
  const { url, routes } = webhookOfId(context.webhooks, id)
  const { wasPaused, woken } = await context.store.circuits.resume(url, routes, now)
  await context.circuitChanged?.(url)
  if (!wasPaused)
    throw new HttpError(409, 'ERR_NOT_PAUSED', `endpoint ${id} (${redactUrl(url)}) is not paused; nothing changed`)
  log.info(`endpoint ${redactUrl(url)} resumed by an operator: ${woken} deliveries due now`, {
    event: 'endpoint-resumed',
    url: redactUrl(url),
  })
  context.wake()
  return { id, url: redactUrl(url), state: 'closed', woken }
}
