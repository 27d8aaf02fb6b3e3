import type { AdminToken } from '../../http/auth'
import type { AuthLimiter } from '../../http/auth-limiter'
import type { HealthReport, LastHour, RecentRates } from '../../events/readings'
import type { AdminContext } from '../operations'

/** What the operator page works on. */
export interface PageContext extends AdminContext {
  adminToken: AdminToken
  /** Counts failed sign-ins per client address, and refuses an address over its failures. */
  authLimiter: AuthLimiter
  /** Whether the store takes writes (what /healthz answers). */
  health: { report(): HealthReport }
  /** The rates the overview shows, and its charts of the last hour. */
  metrics: { recentRates(): RecentRates | Promise<RecentRates>; lastHour(): LastHour | Promise<LastHour> }
  now?: () => number
}
