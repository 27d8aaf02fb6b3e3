import type { IncomingMessage } from 'node:http'
import type { AdminToken } from '../../../http/auth'
import type { AuthLimiter } from '../../../http/auth-limiter'
import { HttpError } from '../../../http/http-error'
import type { Route } from '../../../http/route'
import { STREAM_KINDS, type StreamKind } from './events'
import type { LiveStream, StreamFilter } from './live-stream'

/** What the stream's route works on. */
export interface StreamRouteContext {
  live: LiveStream
  adminToken: AdminToken
  authLimiter: AuthLimiter
  /** The configured sources' names: `source` and `forward` must name one. */
  sourceNames: () => readonly string[]
  /** Whether the request carries a signed-in operator page's session (the live view reads the stream so). */
  hasSession?: (req: IncomingMessage) => Promise<boolean>
}

const PARAMETERS = new Set(['source', 'kinds', 'forward'])

/** `GET /v1/stream?source&kinds&forward`: the live stream (docs/operations.md, "The live stream"). */
export function streamRoutes(context: StreamRouteContext): Route[] {
  return [
    {
      method: 'GET',
      pattern: /^\/v1\/stream$/,
      handler: async (req, res, _params, url) => {
        if ((await context.hasSession?.(req)) !== true) {
          context.authLimiter.guard(req, 'admin API: token', () => context.adminToken.authenticate(req))
        }
        const filter = streamFilterOf(url.searchParams, context.sourceNames())
        const subscription = context.live.open(res, filter)
        if (subscription === undefined) {
          throw new HttpError(
            503,
            'ERR_TOO_MANY_READERS',
            'the live stream has as many readers as this relay takes (streamReaders): try again later, or another relay',
            { 'retry-after': '5' },
          )
        }
      },
    },
  ]
}

/** A reader's filter from the query; a 400 naming what is wrong. */
export function streamFilterOf(query: URLSearchParams, sources: readonly string[]): StreamFilter {
  for (const name of query.keys()) {
    if (!PARAMETERS.has(name)) {
      throw new HttpError(
        400,
        'ERR_INVALID_QUERY',
        `unknown parameter ${JSON.stringify(name)}: the stream takes source, kinds and forward`,
      )
    }
  }
  const known = (name: string, value: string | null): string | undefined => {
    if (value === null) return undefined
    if (!sources.includes(value))
      throw new HttpError(400, 'ERR_INVALID_QUERY', `${name}: no source is named ${JSON.stringify(value)}`)
    return value
  }
  const source = known('source', query.get('source'))
  const forward = known('forward', query.get('forward'))
  if (forward !== undefined && source !== undefined && forward !== source) {
    throw new HttpError(
      400,
      'ERR_INVALID_QUERY',
      'forward and source name different sources: forward one source, and read that one',
    )
  }
  const kinds = query.get('kinds')
  let wanted: Set<StreamKind> = new Set(STREAM_KINDS)
  if (kinds !== null) {
    wanted = new Set()
    for (const kind of kinds.split(',').map((k) => k.trim())) {
      if (!(STREAM_KINDS as readonly string[]).includes(kind)) {
        throw new HttpError(
          400,
          'ERR_INVALID_QUERY',
          `kinds: unknown kind ${JSON.stringify(kind)}; the kinds are ${STREAM_KINDS.join(', ')}`,
        )
      }
      wanted.add(kind as StreamKind)
    }
  }
  // A forwarding reader reads its source's events.
  return { kinds: wanted, source: source ?? forward, forward }
}
