import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { request } from 'undici'
import type { Relay } from '../../../src/relay/index'
import { type Receiver, startReceiver, startRelay } from '../helpers'

// docs/maintainers.md's table of routes, tied to the router: every route it names is served
// (never 404 or 405), and each file's routes are as many as it says.
const doc = readFileSync(new URL('../../../docs/maintainers.md', import.meta.url), 'utf8')
const rows = [...doc.matchAll(/^\| `([\w/.-]+routes\.ts)` \| (.+) \|$/gm)].map(([, file, cell]) => ({
  file: file!,
  routes: [...cell!.matchAll(/`(GET|POST|PUT|DELETE) ([^`]+)`/g)].map(([, method, path]) => ({
    method: method!,
    path: path!,
  })),
}))

/** `/v1/{a,b}/:id` → `/v1/a/1`, `/v1/b/1`: requests that route would take. */
function samples(path: string): string[] {
  const braces = /\{([^}]*)\}/.exec(path)
  if (braces === null) return [path.replace(/:\w+/g, '1')]
  return braces[1]!.split(',').flatMap((part) => samples(path.replace(braces[0], part)))
}

describe('the table of routes in docs/maintainers.md', () => {
  let receiver: Receiver
  let relay: Relay
  beforeAll(async () => {
    receiver = await startReceiver()
    relay = await startRelay(receiver.url)
  })
  afterAll(async () => {
    await relay.close()
    await receiver.close()
  })

  it('lists the route files of every area', () => {
    expect(rows.map((r) => r.file).sort()).toEqual([
      'console/api-routes.ts',
      'console/page/operation-routes.ts',
      'console/page/page-routes.ts',
      'features/functions/test-routes.ts',
      'features/live/page/live-routes.ts',
      'features/live/stream/routes.ts',
      'features/plans/page/violation-routes.ts',
      'features/plans/routes.ts',
      'features/privacy/page/suppression-page-routes.ts',
      'features/privacy/routes.ts',
      'features/replay/archive-routes.ts',
      'features/replay/page-routes.ts',
      'features/replay/routes.ts',
      'features/sources/page/source-page-routes.ts',
      'features/sources/source-routes.ts',
      'ingest/routes.ts',
      'telemetry/routes.ts',
    ])
  })

  it('names as many routes for each file as the file serves', () => {
    for (const { file, routes } of rows) {
      const served = readFileSync(new URL(`../../../src/relay/${file}`, import.meta.url), 'utf8').match(/method: '/g)
      expect(routes.length, file).toBe(served?.length)
    }
  })

  it('names only routes the router serves', async () => {
    const unserved: string[] = []
    for (const { method, path } of rows.flatMap((r) => r.routes)) {
      for (const sample of samples(path)) {
        const response = await request(`${relay.url}${sample}`, { method, headers: { origin: relay.url } })
        await response.body.dump()
        if (response.statusCode === 404 || response.statusCode === 405) {
          const body = response.statusCode === 404 ? ' (no such endpoint?)' : ''
          unserved.push(`${method} ${sample} → ${response.statusCode}${body}`)
        }
      }
    }
    expect(unserved).toEqual([])
  })
})
