import { describe } from '../../shared/validate'
import { HttpError } from '../http/http-error'
import { findNul } from '../store/storable'
import type { RoutedSource } from '../config/sources'
import type { AudienceChange, Store } from '../store/store'
import { syncAudience } from './audiences'
import { requestDeletion } from './deletions'
import { SOURCE_REMOVED } from '../store/source-configs'
import type { WebhookRoutes } from './webhook-urls'
import { storeIdOf } from '../store/store-id'
import type { ConsoleFunctions } from './function-health'

/** What the admin API works on. */
export interface AdminContext {
  store: Store
  sources: readonly RoutedSource[]
  /** New deliveries were committed: wake the worker. */
  wake: () => void
  /** Each configured webhook URL with the routes that send there: the endpoints, and `url` filters. */
  webhooks: WebhookRoutes
  /** An operator paused or resumed `url`: this relay's worker reads its circuit again at once. */
  circuitChanged?: (url: string) => Promise<void>
  /** The destinations' functions (docs/functions.md): their recent calls. */
  functions?: ConsoleFunctions | undefined
  now?: () => number
}

/** `POST /v1/deletions { userId }`: a delete message to every source with Webhooks. */
export async function handleDeletion(
  context: AdminContext,
  body: Record<string, unknown>,
): Promise<{ userId: string; sources: string[] }> {
  const userId = body['userId']
  if (typeof userId !== 'string' || userId.length === 0) {
    throw new HttpError(400, 'ERR_INVALID_BODY', `userId must be a non-empty string, got ${describe(userId)}`)
  }
  refuseNul('ERR_INVALID_BODY', 'userId', userId)
  const sources = await requestDeletion(context.store, context.sources, userId)
  context.wake()
  return { userId, sources }
}

/** `PUT /v1/audiences/:name { source, userIds }`: an audience sync. */
export async function handleAudienceSync(
  context: AdminContext,
  audience: string,
  body: Record<string, unknown>,
): Promise<AudienceChange> {
  const { source: sourceName, userIds } = body
  const source = context.sources.find((s) => s.name === sourceName)
  if (source === undefined) {
    throw new HttpError(
      400,
      'ERR_INVALID_BODY',
      `source must name a configured source (${context.sources.map((s) => JSON.stringify(s.name)).join(', ')}), got ${describe(sourceName)}`,
    )
  }
  if (!Array.isArray(userIds))
    throw new HttpError(400, 'ERR_INVALID_BODY', `userIds must be an array of user ids, got ${describe(userIds)}`)
  const bad = userIds.findIndex((id) => typeof id !== 'string' || id.length === 0)
  if (bad !== -1)
    throw new HttpError(
      400,
      'ERR_INVALID_BODY',
      `userIds[${bad}] must be a non-empty string, got ${describe(userIds[bad])}`,
    )
  for (const [index, id] of (userIds as string[]).entries()) refuseNul('ERR_INVALID_BODY', `userIds[${index}]`, id)
  const change = await syncAudience(context.store, source, audience, userIds as string[])
  context.wake()
  return change
}

/** `POST /v1/deliveries/:id/retry`: a dead-lettered delivery, due again with a fresh window. */
export async function handleRetry(context: AdminContext, id: string): Promise<{ id: number; status: 'pending' }> {
  const numeric = storeIdOf(id) ?? Number.NaN
  await refuseRemovedSource(context, numeric)
  const outcome = Number.isNaN(numeric) ? 'not-found' : await context.store.retry(numeric)
  if (outcome === 'not-found') throw new HttpError(404, 'ERR_NOT_FOUND', `there is no delivery ${JSON.stringify(id)}`)
  if (outcome === 'not-failed') {
    // Its status now, to say what it is rather than only what it is not.
    const status = (await context.store.get(numeric))?.status
    const what = status === 'pending' ? 'pending (it is still being attempted)' : (status ?? 'no longer there')
    throw new HttpError(
      409,
      'ERR_NOT_FAILED',
      `delivery ${id} is ${what}, not dead-lettered: only dead letters can be retried`,
    )
  }
  context.wake()
  return { id: numeric, status: 'pending' }
}

/** Refuses text a store cannot hold with a 400 naming it, rather than a 500 from the database. */
export function refuseNul(code: string, name: string, text: string): void {
  const problem = findNul(name, text)
  if (problem !== undefined) throw new HttpError(400, code, problem)
}

// A dead letter of a source deleted through the admin API would only fail again: refused until a
// source of that name exists again (docs/relay.md, "Sources through the API"). Those of a source
// renamed in the file are left as they were: retried by hand once it is configured again.
async function refuseRemovedSource(context: AdminContext, id: number): Promise<void> {
  if (Number.isNaN(id)) return
  const delivery = await context.store.get(id)
  if (delivery?.status !== 'failed' || delivery.lastError !== SOURCE_REMOVED) return
  if (context.sources.some((s) => s.name === delivery.source)) return
  throw new HttpError(
    409,
    'ERR_SOURCE_REMOVED',
    `delivery ${id} belongs to source ${JSON.stringify(delivery.source)}, which no longer exists: it can be retried once a source of that name exists again`,
  )
}
