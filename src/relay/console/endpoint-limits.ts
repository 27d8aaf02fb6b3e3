import type { EndpointLimitStore } from '../store/endpoint-limits'

/** A limited endpoint's limits as the admin API answers them (docs/delivery-controls.md). */
export interface EndpointLimitJson {
  ratePerSecond?: number
  maxInFlight?: number
  /** Requests in flight to it now, every relay's. */
  inFlight: number
  /** Until when its receiver's 429 with Retry-After holds it (ISO 8601), while it does. */
  heldUntil?: string
}

/**
 * The limits of `urls` that have any, by the endpoint's id, as the store has them (every relay
 * declares its limits there, and counts its requests in flight there).
 */
export async function limitsOf(
  store: EndpointLimitStore,
  urls: readonly string[],
  idOf: (url: string) => string,
): Promise<Map<string, EndpointLimitJson>> {
  const byId = new Map<string, EndpointLimitJson>()
  const now = Date.now()
  for (const state of await store.read(urls)) {
    if (state.ratePerSecond === undefined && state.maxInFlight === undefined) continue
    byId.set(idOf(state.url), {
      ...(state.ratePerSecond === undefined ? {} : { ratePerSecond: state.ratePerSecond }),
      ...(state.maxInFlight === undefined ? {} : { maxInFlight: state.maxInFlight }),
      inFlight: state.inFlight,
      ...(state.heldUntil > now ? { heldUntil: new Date(state.heldUntil).toISOString() } : {}),
    })
  }
  return byId
}
