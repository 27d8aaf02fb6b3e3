import type { DeliveryAttempt, DeliveryResult } from '../../webhooks/index'

/** Why one request failed, for people: `HTTP 503`, or the error (`timed out after 5000 ms…`). */
export function describeRequest(request: DeliveryAttempt): string {
  return request.error ?? (request.status === undefined ? 'failed' : `HTTP ${request.status}`)
}

/**
 * One line saying why each request of a failed attempt failed: `URL: HTTP 503; URL: timeout`.
 * `showUrl` decides how each URL appears (whole by default).
 */
export function describeFailure(result: DeliveryResult, showUrl: (url: string) => string = (url) => url): string {
  return describeRequests(result.attempts, showUrl)
}

/** {@link describeFailure} of the requests alone. */
export function describeRequests(
  requests: readonly DeliveryAttempt[],
  showUrl: (url: string) => string = (url) => url,
): string {
  if (requests.length === 0) return 'no request was made'
  return requests.map((a) => `${showUrl(a.url)}: ${describeRequest(a)}`).join('; ')
}
