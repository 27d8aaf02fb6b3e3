import { isIP } from 'node:net'
import { redactUrl } from '../../../shared/redact-url'
import { describe, isPlainObject } from '../../../shared/validate'
import { WEBHOOKS_DESTINATION } from '../../config/sources'
import { HttpError } from '../../http/http-error'
import type { DeliveryRoute } from '../../store/circuits'
import type { ReplayAction, ReplayRecord } from '../../store/replays'
import type { DeliveryFilter } from '../../store/store'
import { type FilterSource, parseFilter, type RequestedFilter } from '../../console/delivery-filter'
import { storeIdOf } from '../../store/store-id'
import type { AdminContext } from '../../console/operations'
import { routesOfUrl } from '../../console/webhook-urls'
import { classifyAddress, type Resolve, resolveAll } from '../../net/address'
import { countArchived, type SourceArchives } from './from-archive'

// The replays of the admin API (docs/replay.md): `POST /v1/replays`, `GET /v1/replays[/:id]`, and
// pause, resume and cancel.

/** New deliveries per second a replay makes when `ratePerSecond` is not given. */
export const DEFAULT_REPLAY_RATE = 100

/** The highest `ratePerSecond` taken. */
export const MAX_REPLAY_RATE = 10_000

/** The answer to an action a replay's state does not allow (resuming a cancelled one). */
export const ERR_REPLAY_STATE = 'ERR_REPLAY_STATE'

const BODY: FilterSource = { kind: 'body', code: 'ERR_INVALID_BODY', prefix: 'filter.' }
/** The fields of `POST /v1/replays`: docs/replay.md's table lists them. */
export const REPLAY_FIELDS = ['from', 'filter', 'to', 'dryRun', 'ratePerSecond'] as const
const FIELDS = REPLAY_FIELDS

/** Where a replay reads what it sends: the outbox (the default) or the archive's files. */
export const REPLAY_ORIGINS = ['outbox', 'archive'] as const

/** What the replays' API works on: the admin API's, and the sources' archives. */
export interface ReplayContext extends AdminContext {
  /** The sources' archives, for a replay from the archive; without them it is refused. */
  archives?: SourceArchives | undefined
  /** The relay's `allowPrivateNetworks`: whether `to.url` may name a private address. */
  allowPrivateNetworks?: boolean | undefined
  /** Resolves a host name (tests). */
  resolve?: Resolve | undefined
}

/** A replay as the admin API shows it. */
export interface ReplayJson {
  id: number
  state: ReplayRecord['state']
  from: ReplayRecord['from']
  matched: number
  queued: number
  delivered: number
  failed: number
}

/** A replay request, checked. */
export interface ReplayRequest {
  from: (typeof REPLAY_ORIGINS)[number]
  filter: DeliveryFilter
  /**
   * The one URL to send to (a configured one as configured, its query included, or any other the
   * SSRF guard accepts); `undefined`: the destination.
   */
  url: string | undefined
  /** `url` is none of the source's configured URLs: checked against the SSRF guard before it starts. */
  unlisted: boolean
  dryRun: boolean
  ratePerSecond: number
}

/** `POST /v1/replays`: a dry run's count, or a replay started (202). */
export async function handleStartReplay(
  context: ReplayContext,
  body: Record<string, unknown>,
): Promise<{ status: number; body: { id?: number; matched: number } }> {
  const request = readReplayRequest(context, body)
  if (request.unlisted && request.url !== undefined) await checkReachable(context, request.url)
  if (request.from === 'archive') {
    const matched = await countArchived(context.archives!, request.filter)
    if (request.dryRun) return { status: 200, body: { matched } }
    const replay = await context.store.replays.create({ ...request, archive: { matched } })
    context.wake()
    return { status: 202, body: { id: replay.id, matched: replay.matched } }
  }
  if (request.dryRun) return { status: 200, body: { matched: await context.store.replays.count(request.filter) } }
  const replay = await context.store.replays.create(request)
  context.wake()
  return { status: 202, body: { id: replay.id, matched: replay.matched } }
}

// A URL no source lists must pass the SSRF guard's rules now (the guard checks again at connect).
async function checkReachable(context: ReplayContext, url: string): Promise<void> {
  if (context.allowPrivateNetworks === true) return
  const host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1')
  let addresses: { address: string }[]
  try {
    addresses = isIP(host) !== 0 ? [{ address: host }] : await (context.resolve ?? resolveAll)(host)
  } catch (error) {
    throw new HttpError(400, BODY.code, `to.url: ${host} does not resolve (${(error as Error).message})`)
  }
  for (const { address } of addresses) {
    const kind = classifyAddress(address)
    if (kind !== undefined)
      throw new HttpError(
        400,
        BODY.code,
        `to.url: ${host} is a ${kind} address (${address}); set allowPrivateNetworks to reach private networks`,
      )
  }
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
  const { id, state, from, matched, queued, delivered, failed } = replay
  return { id, state, from, matched, queued, delivered, failed }
}

/**
 * A replay request from a body: every problem found is named in one 400 (`ERR_INVALID_BODY`).
 * The filter is a delivery filter with `since` and `until` required; without a `url` filter it is
 * kept to the routes configured now (a removed source's messages have nowhere to go).
 */
export function readReplayRequest(context: ReplayContext, body: Record<string, unknown>): ReplayRequest {
  const problems: string[] = []
  for (const key of Object.keys(body))
    if (!(FIELDS as readonly string[]).includes(key))
      problems.push(`unknown field ${JSON.stringify(key)}; allowed: ${FIELDS.join(', ')}`)
  const from = readOrigin(context, body['from'], problems)
  const requested = readFilter(body['filter'], problems, context.now?.() ?? Date.now())
  const target = readTarget(context, body['to'], requested, problems)
  const { dryRun = false, ratePerSecond = DEFAULT_REPLAY_RATE } = body
  if (typeof dryRun !== 'boolean') problems.push(`dryRun must be true or false, got ${describe(dryRun)}`)
  if (typeof ratePerSecond !== 'number' || !(ratePerSecond > 0 && ratePerSecond <= MAX_REPLAY_RATE))
    problems.push(
      `ratePerSecond must be a number above 0 and at most ${MAX_REPLAY_RATE}, got ${describe(ratePerSecond)}`,
    )
  const filter =
    requested === undefined
      ? undefined
      : from === 'archive'
        ? archiveFilter(context, requested, problems)
        : storeFilter(context, requested, problems)
  if (problems.length > 0 || filter === undefined || from === undefined)
    throw new HttpError(400, BODY.code, problems.join('; '))
  const { url, unlisted } = target
  if (from === 'archive' && url === undefined) {
    const withWebhooks = new Set(
      context.sources.filter((s) => s.destinations.includes(WEBHOOKS_DESTINATION)).map((s) => s.name),
    )
    const without = (filter.routes ?? []).map((r) => r.source).filter((source) => !withWebhooks.has(source))
    if (without.length > 0)
      throw new HttpError(
        400,
        BODY.code,
        `to: source ${JSON.stringify(without[0])} has no Webhooks to send to: give to.url`,
      )
  }
  return { from, filter, url, unlisted, dryRun: dryRun as boolean, ratePerSecond: ratePerSecond as number }
}

function readOrigin(
  context: ReplayContext,
  raw: unknown,
  problems: string[],
): (typeof REPLAY_ORIGINS)[number] | undefined {
  if (raw === undefined) return 'outbox'
  if (!(REPLAY_ORIGINS as readonly unknown[]).includes(raw)) {
    problems.push(`from must be one of ${REPLAY_ORIGINS.map((o) => `"${o}"`).join(', ')}, got ${describe(raw)}`)
    return undefined
  }
  if (raw === 'archive' && context.archives === undefined) {
    problems.push('from "archive" is not served here: use POST /v1/replays of the admin API')
    return undefined
  }
  return raw as (typeof REPLAY_ORIGINS)[number]
}

// A replay from the archive reads the files of the filter's source, or of every source that
// archives: a status or a URL is the outbox's, not the files'.
function archiveFilter(
  context: ReplayContext,
  requested: RequestedFilter,
  problems: string[],
): DeliveryFilter | undefined {
  const archiving = context.archives?.names() ?? []
  for (const field of ['status', 'url'] as const)
    if (requested[field] !== undefined)
      problems.push(
        `filter.${field} is the outbox's: a replay from the archive filters by source, type, event, userId, messageId and time`,
      )
  if (requested.source !== undefined && !archiving.includes(requested.source)) {
    const known = archiving.map((name) => JSON.stringify(name)).join(', ') || 'none'
    problems.push(
      `filter.source must name a source with an Archive (${known}), got ${JSON.stringify(requested.source)}`,
    )
    return undefined
  }
  const { status: _status, url: _url, ...rest } = requested
  const sources = requested.source === undefined ? archiving : [requested.source]
  return { ...rest, routes: sources.map((source) => ({ source, destination: WEBHOOKS_DESTINATION })) }
}

function readFilter(raw: unknown, problems: string[], now: number): RequestedFilter | undefined {
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
  if (raw['since'] === undefined)
    problems.push('filter.since is required (an ISO 8601 time, epoch ms or a time ago such as 7d)')
  // Without `until`, the window ends when the replay is asked for.
  if (filter !== undefined && raw['until'] === undefined) filter.until = now
  return filter
}

// The one URL of `to`: one of the filter's source's Webhooks URLs (as configured), or any other
// http(s) URL (`unlisted`: the SSRF guard's rules are checked before the replay starts).
function readTarget(
  context: ReplayContext,
  to: unknown,
  filter: RequestedFilter | undefined,
  problems: string[],
): { url: string | undefined; unlisted: boolean } {
  const none = { url: undefined, unlisted: false }
  if (to === undefined) return none
  const forms = `{ "destination": "${WEBHOOKS_DESTINATION}" } or { "url": "…" }`
  if (!isPlainObject(to) || Object.keys(to).length !== 1) {
    problems.push(`to must be ${forms}, got ${describe(to)}`)
    return none
  }
  if ('destination' in to) {
    if (to['destination'] !== WEBHOOKS_DESTINATION)
      problems.push(`to.destination must be "${WEBHOOKS_DESTINATION}", got ${describe(to['destination'])}`)
    return none
  }
  const url = to['url']
  if (typeof url !== 'string' || url.length === 0) {
    problems.push(`to must be ${forms}, got ${describe(to)}`)
    return none
  }
  const source = filter?.source
  if (source === undefined) {
    problems.push('to.url needs filter.source: the source whose copies go there, signed with its secret')
    return none
  }
  const shown = redactUrl(url)
  const configured = [...context.webhooks].find(
    ([candidate, routes]) =>
      (candidate === url || redactUrl(candidate) === shown) &&
      routes.some((r) => r.source === source && r.destination === WEBHOOKS_DESTINATION),
  )
  if (configured !== undefined) return { url: configured[0], unlisted: false }
  let parsed: URL | undefined
  try {
    parsed = new URL(url)
  } catch {
    parsed = undefined
  }
  if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    problems.push(`to.url must be a full http: or https: URL, got ${JSON.stringify(shown)}`)
    return none
  }
  return { url, unlisted: true }
}

// The filter as the store takes it: a `url` becomes the routes that send there; without one, the
// routes configured now.
function storeFilter(
  context: AdminContext,
  requested: RequestedFilter,
  problems: string[],
): DeliveryFilter | undefined {
  const { url, ...rest } = requested
  const configured: DeliveryRoute[] = context.sources
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
