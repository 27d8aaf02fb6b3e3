import type { IncomingMessage } from 'node:http'
import { listArchive } from '../../destinations/archive/listing'
import { parseFilter } from '../../console/delivery-filter'
import { sendJson } from '../../http/body'
import { HttpError } from '../../http/http-error'
import type { Route } from '../../http/route'
import type { SourceArchives } from './from-archive'

const QUERY = { kind: 'query', code: 'ERR_INVALID_QUERY' } as const

/**
 * `GET /v1/archive?source&since&until` (docs/archive.md): the files of a source's archive whose
 * messages were received in the window, oldest first, with their counts and sizes. `until`
 * defaults to now; a read token may list them.
 */
export function archiveRoutes(
  archives: SourceArchives,
  authenticate: (req: IncomingMessage) => void,
  now: () => number = Date.now,
): Route[] {
  return [
    {
      method: 'GET',
      pattern: /^\/v1\/archive$/,
      handler: async (req, res, _params, url) => {
        authenticate(req)
        const problems: string[] = []
        for (const key of url.searchParams.keys())
          if (!['source', 'since', 'until'].includes(key))
            problems.push(`unknown parameter ${JSON.stringify(key)}; allowed: source, since, until`)
        const source = url.searchParams.get('source')
        const names = archives.names()
        if (source === null || !names.includes(source)) {
          const known = names.map((n) => JSON.stringify(n)).join(', ') || 'none'
          problems.push(`source must name a source with an Archive (${known}), got ${JSON.stringify(source)}`)
        }
        if (url.searchParams.get('since') === null)
          problems.push('since is required (an ISO 8601 time, epoch ms or a time ago such as 7d)')
        let window: { since?: number | undefined; until?: number | undefined } = {}
        try {
          const times = new Map([...url.searchParams].filter(([key]) => key === 'since' || key === 'until'))
          window = parseFilter(times, QUERY)
        } catch (error) {
          if (!(error instanceof HttpError)) throw error
          problems.push(error.message)
        }
        if (problems.length > 0) throw new HttpError(400, QUERY.code, problems.join('; '))
        const archive = archives.of(source!)!
        const listed = await listArchive(archive.store, archive.prefix, {
          source: source!,
          since: window.since ?? 0,
          until: window.until ?? now(),
        })
        sendJson(res, 200, listed)
      },
    },
  ]
}
