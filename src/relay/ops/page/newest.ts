import type { DeliveryStatus, DeliveryView, Store } from '../../store/store'

/** Which deliveries to show, newest first. */
export interface NewestQuery {
  status?: DeliveryStatus | undefined
  source?: string | undefined
  /** Only deliveries with an id below this one (the next page's cursor). */
  before?: number | undefined
  limit: number
}

// The widest id range read at once, so memory stays bounded however sparse the filter's matches.
const MAX_WINDOW = 5000

/**
 * The newest `limit` deliveries matching the filter, newest first. The store's delivery log pages
 * oldest first (`list` after an id), so this finds the highest id in O(log n) probes by primary
 * key, then reads id windows downwards, doubling their width, until it has a page. A store with a
 * newest-first `list` would make this a single query.
 */
export async function newestDeliveries(store: Store, query: NewestQuery): Promise<DeliveryView[]> {
  const top = await highestId(store)
  let hi = query.before === undefined ? top : Math.min(top, query.before - 1)
  let width = Math.max(2 * query.limit, 16)
  let found: DeliveryView[] = []
  while (found.length < query.limit && hi > 0) {
    const lo = Math.max(0, hi - width)
    // At most `width` ids lie in (lo, hi], so a page of `width` holds every match among them.
    const page = await store.list({ status: query.status, source: query.source, after: lo, limit: width })
    found = page.filter((d) => d.id <= hi).concat(found)
    hi = lo
    width = Math.min(2 * width, MAX_WINDOW)
  }
  return found.slice(-query.limit).reverse()
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
