import { randomBytes } from 'node:crypto'
import type { RelayEventListener } from '../events/channel'
import type { Store } from '../store/store'
import type { StoreHealth } from './health'

// The audience the health probe writes. The admin API refuses an empty audience name, so no
// real audience can ever share these rows; the probe leaves it empty.
const PROBE_SOURCE = 'tracklet:health-probe'
const PROBE_AUDIENCE = ''
// Characters per probe member: random hex (incompressible), well under PostgreSQL's index row limit.
const PROBE_MEMBER_CHARS = 1000

/**
 * A write that touches nothing a user sees, of at least `bytes`: it fills the probe audience with
 * that many bytes of new members in one transaction, then empties it in another (so the next
 * probe needs new room again, as ingest does), and enqueues nothing.
 */
export async function probeWrite(store: Store, bytes = 0): Promise<void> {
  const members = Array.from({ length: Math.max(1, Math.ceil(bytes / PROBE_MEMBER_CHARS)) }, () =>
    randomBytes(PROBE_MEMBER_CHARS / 2).toString('hex'),
  )
  await store.syncAudience(PROBE_SOURCE, PROBE_AUDIENCE, members, () => [])
  await store.syncAudience(PROBE_SOURCE, PROBE_AUDIENCE, [], () => [])
}

/** What `health` hears of the store: each `write` event's outcome (`events/watched-store.ts`). */
export function judgeWrites(health: StoreHealth): RelayEventListener {
  return (event) => {
    if (event.type !== 'write') return
    if (event.error === undefined) health.succeeded(event.kind)
    else health.failed(event.kind, event.error, event.bytes)
  }
}
