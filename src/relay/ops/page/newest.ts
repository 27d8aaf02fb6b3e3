import type { DeliveryStatus, DeliveryView, Store } from '../../store/store'

/** Which deliveries to show, newest first. */
export interface NewestQuery {
  status?: DeliveryStatus | undefined
  source?: string | undefined
  /** Only deliveries with an id below this one (the next page's cursor). */
  before?: number | undefined
  limit: number
}

// The widest id range read at once (ids, not rows): the windows grow to it, doubling.
const MAX_WINDOW = 5000
// Deliveries asked of the store per read within a window: from the first to the most.
const FIRST_READ = 8
const MAX_READ = 500

/**
 * The newest `limit` deliveries matching the filter, newest first. The store's delivery log pages
 * oldest first (`list` after an id), so this finds the highest id in O(log n) probes by primary
 * key, then reads id windows downwards, doubling their width, until it has a page. Within a window
 * it reads forwards in small, growing steps, so the store stops scanning soon after the window's
 * end even when the filter is sparse (a few dead letters among many delivered ones).
 * A store with a newest-first `list` would make this a single query.
 */
export async function newestDeliveries(store: Store, query: NewestQuery): Promise<DeliveryView[]> {
  const top = await highestId(store)
  let hi = query.before === undefined ? top : Math.min(top, query.before - 1)
  let width = Math.max(2 * query.limit, 16)
  let found: DeliveryView[] = []
  while (found.length < query.limit && hi > 0) {
    const lo = Math.max(0, hi - width)
    let window: DeliveryView[] = []
    // Small reads first: the store scans until it has `pageSize` matches, and past the window the
    // matches may be far apart. Doubled while every match read lies inside the window.
    let pageSize = FIRST_READ
    for (let after = lo; ; ) {
      const page = await store.list({ status: query.status, source: query.source, after, limit: pageSize })
      const inside = page.filter((d) => d.id <= hi)
      // Only the newest `limit` of a window can be shown.
      window = window.concat(inside).slice(-query.limit)
      if (inside.length < pageSize) break
      after = inside.at(-1)!.id
      pageSize = Math.min(2 * pageSize, MAX_READ)
    }
    found = window.concat(found).slice(-query.limit)
    hi = lo
    width = Math.min(2 * width, MAX_WINDOW)
  }
  return found.reverse()
}

// The highest delivery id (0 when there is none): doubling, then halving, on "is there any after x".
async function highestId(store: Store): Promise<number> {
  const anyAfter = async (id: number) => (await store.list({ after: id, limit: 1 })).length > 0
  let lo = 0
  if (!(await anyAfter(lo))) return 0
  let hi = 1
  while (await anyAfter(hi)) {
    lo = hi
    hi *= 2
  }
  // Some id is above lo and none above hi.
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2)
    if (await anyAfter(mid)) lo = mid
    else hi = mid
  }
  return hi
}
