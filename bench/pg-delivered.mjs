// The PostgreSQL benches' outcome of a delivery: delivered at its first attempt, one request
// answered 200 in 5 ms (bench/pg-claim-explain.mjs, bench/pg-range-leases.mjs).

/** Records `deliveries` (as the store's claim answered them) delivered, through `store.record`. */
export function recordDelivered(store, deliveries) {
  return store.record(
    deliveries.map((d) => ({
      id: d.id,
      at: Date.now() - 5,
      requests: [{ url: 'http://127.0.0.1:1/hook', status: 200, ms: 5 }],
      next: { status: 'delivered' },
    })),
  )
}
