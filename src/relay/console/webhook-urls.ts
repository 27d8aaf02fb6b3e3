import { redactUrl } from '../../shared/redact-url'
import { HttpError } from '../http/http-error'
import type { DeliveryRoute } from '../store/circuits'
import { endpointId } from '../store/endpoints'

/** Each configured webhook URL, whole, with the routes (source and destination) that send there. */
export type WebhookRoutes = ReadonlyMap<string, readonly DeliveryRoute[]>

/**
 * The routes that send to `url`: the configured URLs equal to it, or equal once both are cut to
 * origin and path (the form `GET /v1/endpoints` and the page show, without the query's tokens).
 * A URL the relay does not send to is a 400 naming `name`.
 */
export function routesOfUrl(webhooks: WebhookRoutes, url: string, name: string, code: string): DeliveryRoute[] {
  const shown = redactUrl(url)
  const routes = [...webhooks].filter(([configured]) => configured === url || redactUrl(configured) === shown)
  if (routes.length === 0) {
    throw new HttpError(
      400,
      code,
      `${name} must be a webhook URL this relay sends to (as GET /v1/endpoints lists them), got ${JSON.stringify(shown)}`,
    )
  }
  const unique = new Map(routes.flatMap(([, rs]) => rs).map((r) => [`${r.source}\u0000${r.destination}`, r]))
  return [...unique.values()]
}

/** The configured URL whose endpoint id is `id`, with its routes; a 404 naming `id` when none. */
export function webhookOfId(webhooks: WebhookRoutes, id: string): { url: string; routes: readonly DeliveryRoute[] } {
  for (const [url, routes] of webhooks) if (endpointId(url) === id) return { url, routes }
  throw new HttpError(
    404,
    'ERR_NOT_FOUND',
    `there is no endpoint ${JSON.stringify(id.slice(0, 40))}; GET /v1/endpoints lists them`,
  )
}
