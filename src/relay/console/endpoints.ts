import { redactUrl } from '../../shared/redact-url'
import { HttpError } from '../http/http-error'
import { log } from '../log'
import { type EndpointView, endpointId } from '../store/endpoints'
import { type EndpointLimitJson, limitsOf } from './endpoint-limits'
import { statusOf } from '../destinations/status-board'
import { type FunctionCallsJson, functionCallsJson, functionsOf } from './function-health'
import type { AdminContext } from './operations'
import { webhookOfId } from './webhook-urls'

/**
 * An endpoint as the admin API answers it: the endpoints view, its times in ISO 8601 as every
 * time of the admin API is (`/v1/deliveries` too), not epoch ms.
 */
export type EndpointJson = Omit<
  EndpointView,
  'openedAt' | 'pausedAt' | 'nextProbeAt' | 'lastFailure' | 'oldestPendingAt'
> & {
  openedAt?: string
  /** When the oldest delivery pending for it was written. */
  oldestPendingAt?: string
  /** An archive's or a warehouse's last success and conflicts, as this relay process saw them. */
  destination?: { last?: { at: string; text: string }; conflicts?: number }
  pausedAt?: string
  nextProbeAt?: string
  lastFailure?: Omit<NonNullable<EndpointView['lastFailure']>, 'at'> & { at: string }
  /** The functions of its sources, with their calls of the last minutes in this relay (docs/functions.md). */
  functions?: FunctionCallsJson[]
  /** Its limits, every relay's requests in flight and a hold (docs/delivery-controls.md), when limited. */
  limit?: EndpointLimitJson
}

/** `GET /v1/endpoints`: every webhook URL the relay sends to, as the endpoints view shows it. */
export async function handleEndpoints(context: AdminContext, now: number): Promise<{ endpoints: EndpointJson[] }> {
  const endpoints = [...context.webhooks].map(([url, routes]) => ({ url, routes }))
  const recent = context.functions?.recent(now) ?? []
  const limits = await limitsOf(
    context.store.endpointLimits,
    endpoints.map((e) => e.url),
    endpointId,
  )
  return {
    endpoints: (await context.store.endpoints({ endpoints, now })).map((view) => {
      const functions = functionsOf(view.sources, recent).map(functionCallsJson)
      const json: EndpointJson = functions.length === 0 ? endpointJson(view) : { ...endpointJson(view), functions }
      const limit = limits.get(view.id)
      return limit === undefined ? json : { ...json, limit }
    }),
  }
}

function endpointJson(view: EndpointView): EndpointJson {
  const { openedAt, pausedAt, nextProbeAt, lastFailure, oldestPendingAt, ...rest } = view
  const iso = (ms: number) => new Date(ms).toISOString()
  const status = statusOf(view.id)
  return {
    ...rest,
    ...(oldestPendingAt === undefined ? {} : { oldestPendingAt: iso(oldestPendingAt) }),
    ...(status === undefined
      ? {}
      : {
          destination: {
            ...(status.last === undefined ? {} : { last: { ...status.last, at: iso(status.last.at) } }),
            ...(status.conflicts === undefined ? {} : { conflicts: status.conflicts }),
          },
        }),
    ...(openedAt === undefined ? {} : { openedAt: iso(openedAt) }),
    ...(pausedAt === undefined ? {} : { pausedAt: iso(pausedAt) }),
    ...(nextProbeAt === undefined ? {} : { nextProbeAt: iso(nextProbeAt) }),
    ...(lastFailure === undefined ? {} : { lastFailure: { ...lastFailure, at: iso(lastFailure.at) } }),
  }
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
