import { request } from 'undici'
import { sseEvents } from '../../../../src/cli/sse-events'
import { ADMIN_TOKEN } from '../../helpers'

/** An event of the live stream as a reader got it. */
export interface ReadEvent {
  kind: string
  data: any
}

/** A reader of a relay's live stream: the events so far, waited for by predicate. */
export interface StreamReader {
  status: number
  events: ReadEvent[]
  /** Resolves with the first event (already read or to come) that `match` takes. */
  next(match: (event: ReadEvent) => boolean, what: string): Promise<ReadEvent>
  close(): void
}

/** Opens `GET /v1/stream?<query>` with the admin token and reads it as it comes. */
export async function openStream(relayUrl: string, query = '', token = ADMIN_TOKEN): Promise<StreamReader> {
  const controller = new AbortController()
  const response = await request(`${relayUrl}/v1/stream${query === '' ? '' : `?${query}`}`, {
    headers: { authorization: `Bearer ${token}` },
    signal: controller.signal,
  })
  const events: ReadEvent[] = []
  const waiters: { match: (e: ReadEvent) => boolean; resolve: (e: ReadEvent) => void }[] = []
  if (response.statusCode === 200) {
    void (async () => {
      try {
        for await (const { event, data } of sseEvents(response.body)) {
          const read = { kind: event, data: JSON.parse(data) }
          events.push(read)
          for (const waiter of [...waiters]) {
            if (waiter.match(read)) {
              waiters.splice(waiters.indexOf(waiter), 1)
              waiter.resolve(read)
            }
          }
        }
      } catch {
        // aborted by close()
      }
    })()
  } else {
    events.push({ kind: 'answer', data: await response.body.json() })
  }
  return {
    status: response.statusCode,
    events,
    next(match, what) {
      const found = events.find(match)
      if (found !== undefined) return Promise.resolve(found)
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`timed out waiting for ${what}; got ${JSON.stringify(events)}`)),
          15_000,
        )
        waiters.push({
          match,
          resolve: (event) => {
            clearTimeout(timer)
            resolve(event)
          },
        })
      })
    },
    close: () => controller.abort(),
  }
}
