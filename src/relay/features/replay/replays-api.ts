import { redactUrl } from '../../../shared/redact-url'
import { describe, isPlainObject } from '../../../shared/validate'
import { WEBHOOKS_DESTINATION } from '../../config/sources'
import { HttpError } from '../../http/http-error'
import type { Route } from '../../store/circuits'
import type { ReplayAction, ReplayRecord } from '../../store/replays'
import type { DeliveryFilter } from '../../store/store'
import { type FilterSource, parseFilter, type RequestedFilter } from '../../console/delivery-filter'
import { storeIdOf } from '../../store/store-id'
import type { AdminContext } from '../../console/operations'
import { routesOfUrl } from '../../console/webhook-urls'

// The replays of the admin API (docs/replay.md): `POST /v1/replays`, `GET /v1/replays[/:id]`, and
// pause, resume and cancel.

/** New deliveries per second a replay makes when `ratePerSecond` is not given. */
export const DEFAULT_REPLAY_RATE = 100

/** The highest `ratePerSecond` taken. */
export const MAX_REPLAY_RATE = 10_000

/** The answer to an action a replay's state does not allow (resuming a cancelled one). */
export const ERR_REPLAY_STATE = 'ERR_REPLAY_STATE'

const BODY: FilterSource = { kind: 'body', code: 'ERR_INVALID_BODY', prefix: 'filter.' }
const FIELDS = ['filter', 'to', 'dryRun', 'ratePerSecond'] as const

/** A replay as the admin API shows it. */
export interface ReplayJson {
  id: number
  state: ReplayRecord['state']
  matched: number
  queued: number
  delivered: number
  failed: number
}

/** A replay request, checked. */
export interface ReplayRequest {
  filter: DeliveryFilter
  /** The one configured URL to send to (as configured, its query included); `undefined`: the destination. */
  url: string | undefined
  dryRun: boolean
  ratePerSecond: number
}

/** `POST /v1/replays`: a dry run's count, or a replay started (202). */
export async function handleStartReplay(
  context: AdminContext,
  body: Record<string, unknown>,
): Promise<{ status: number; body: { id?: number; matched: number } }> {
  const request = readReplayRequest(context, body)
  if (request.dryRun) return { status: 200, body: { matched: await context.store.replays.count(request.filter) } }
  const replay = await context.store.replays.create(request)
  return { status: 202, body: { id: replay.id, matched: replay.matched } }
}

/** `GET /v1/replays/:id`. */
export async function handleGetReplay(context: AdminContext, id: string): Promise<ReplayJson> {
  return toReplayJson(await replayOf(context, id))
}

/** `GET /v1/replays`: newest first. */
export async function handleListReplays(context: AdminContext): Promise<{ replays: ReplayJson[] }> {
  return { replays: (await context.store.replays.list()).map(toReplayJson) }
}

/** `POST /v1/replays/:id/pause|resume|cancel`: 409 when the replay's state does not allow it. */
export async function handleChangeReplay(context: AdminContext, id: string, action: ReplayAction): Promise<ReplayJson> {
  const numeric = idOf(id)
  const changed = numeric === undefined ? undefined : await context.store.replays.change(numeric, action)
  if (changed === undefined) throw notFound(id)
  if ('refused' in changed)
    throw new HttpError(409, ERR_REPLAY_STATE, `replay ${numeric} is ${changed.refused.state}: it cannot ${action}`)
  return toReplayJson(changed)
}

/** One replay, or a 404 naming the id. */
export async function replayOf(context: AdminContext, id: string): Promise<ReplayRecord> {
  const numeric = idOf(id)
  const replay = numeric === undefined ? undefined : await context.store.replays.get(numeric)
  if (replay === undefined) throw notFound(id)
  return replay
}

/** The admin API's form of a replay. */
export function toReplayJson(replay: ReplayRecord): ReplayJson {
  const { id, state, matched, queued, delivered, failed } = replay
  return { id, state, matched, queued, delivered, failed }
}

/**
 * A replay request from a body: every problem found is named in one 400 (`ERR_INVALID_BODY`).
 * The filter is a delivery filter with `since` and `until` required; without a `url` filter it is
 * kept to the routes configured now (a removed source's messages have nowhere to go).
 */
export function readReplayRequest(context: AdminContext, body: Record<string, unknown>): ReplayRequest {
  const problems: string[] = []
  for (const key of Object.keys(body))
    if (!(FIELDS as readonly string[]).includes(key))
      problems.push(`unknown field ${JSON.stringify(key)}; allowed: ${FIELDS.join(', ')}`)
  const requested = readFilter(body['filter'], problems)
  const url = readTarget(context, body['to'], requested, problems)
  const { dryRun = false, ratePerSecond = DEFAULT_REPLAY_RATE } = body
  if (typeof dryRun !== 'boolean') problems.push(`dryRun must be true or false, got ${describe(dryRun)}`)
  if (typeof ratePerSecond !== 'number' || !(ratePerSecond > 0 && ratePerSecond <= MAX_REPLAY_RATE))
    problems.push(
      `ratePerSecond must be a number above 0 and at most ${MAX_REPLAY_RATE}, got ${describe(ratePerSecond)}`,
    )
  const filter = requested === undefined ? undefined : storeFilter(context, requested, problems)
  if (problems.length > 0 || filter === undefined) throw new HttpError(400, BODY.code, problems.join('; '))
  return { filter, url, dryRun: dryRun as boolean, ratePerSecond: ratePerSecond as number }
}

function readFilter(raw: unknown, problems: string[]): RequestedFilter | undefined {
  if (!isPlainObject(raw)) {
    problems.push(`filter must be an object with since and until at least, got ${describe(raw)}`)
    return undefined
  }
  let filter: RequestedFilter | undefined
  try {
    filter = parseFilter(new Map(Object.entries(raw)), BODY)
  } catch (error) {
    if (!(error instanceof HttpError)) throw error
    problems.push(error.message)
  }
  for (const field of ['since', 'until'] as const)
    if (raw[field] === undefined)
      problems.push(`filter.${field} is required (an ISO 8601 time, epoch ms or a time ago such as 7d)`)
  return filter
}

// The one URL of `to`, as configured: it must be one of the filter's source's Webhooks URLs now.
function readTarget(
  context: AdminContext,
  to: unknown,
  filter: RequestedFilter | undefined,
  problems: string[],
): string | undefined {
  if (to === undefined) return undefined
  const forms = `{ "destination": "${WEBHOOKS_DESTINATION}" } or { "url": "…" }`
  if (!isPlainObject(to) || Object.keys(to).length !== 1) {
    problems.push(`to must be ${forms}, got ${describe(to)}`)
    return undefined
  }
  if ('destination' in to) {
    if (to['destination'] !== WEBHOOKS_DESTINATION)
      problems.push(`to.destination must be "${WEBHOOKS_DESTINATION}", got ${describe(to['destination'])}`)
    return undefined
  }
  const url = to['url']
  if (typeof url !== 'string' || url.length === 0) {
    problems.push(`to must be ${forms}, got ${describe(to)}`)
    return undefined
  }
  const source = filter?.source
  if (source === undefined) {
    problems.push('to.url needs filter.source: the source whose Webhooks settings list the URL')
    return undefined
  }
  const shown = redactUrl(url)
  const configured = [...context.webhooks].find(
    ([candidate, routes]) =>
      (candidate === url || redactUrl(candidate) === shown) &&
      routes.some((r) => r.source === source && r.destination === WEBHOOKS_DESTINATION),
  )
  if (configured === undefined) {
    problems.push(
      `to.url must be one of the URLs in source ${JSON.stringify(source)}'s Webhooks settings, got ${JSON.stringify(shown)}`,
    )
    return undefined
  }
  return configured[0]
}

// The filter as the store takes it: a `url` becomes the routes that send there; without one, the
// routes configured now.
function storeFilter(
  context: AdminContext,
  requested: RequestedFilter,
  problems: string[],
): DeliveryFilter | undefined {
  const { url, ...rest } = requested
  const configured: Route[] = context.sources
    .filter((s) => s.destinations.includes(WEBHOOKS_DESTINATION))
    .map((s) => ({ source: s.name, destination: WEBHOOKS_DESTINATION }))
  if (rest.source !== undefined && !configured.some((r) => r.source === rest.source)) {
    problems.push(`filter.source must name a configured source with Webhooks, got ${JSON.stringify(rest.source)}`)
    return undefined
  }
  if (url === undefined) return { ...rest, routes: configured }
  try {
    return { ...rest, routes: routesOfUrl(context.webhooks, url, 'filter.url', BODY.code) }
  } catch (error) {
    if (!(error instanceof HttpError)) throw error
    problems.push(error.message)
    return undefined
  }
}

function idOf(id: string): number | undefined {
  return storeIdOf(id)
}

function notFound(id: string): HttpError {
  return new HttpError(
    404,
    'ERR_NOT_FOUND',
    `there is no replay ${JSON.stringify(id.slice(0, 40))}; GET /v1/replays lists them`,
  )
}
