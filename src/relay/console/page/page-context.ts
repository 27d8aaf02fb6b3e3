import type { AdminToken } from '../../http/auth'
import type { AuthLimiter } from '../../http/auth-limiter'
import type { StoreHealth } from '../../telemetry/health'
import type { RelayMetrics } from '../../telemetry/metrics'
import type { AdminContext } from '../operations'

/** What the operator page works on. */
export interface PageContext extends AdminContext {
  adminToken: AdminToken
  /** Counts failed sign-ins per client address, and refuses an address over its failures. */
  authLimiter: AuthLimiter
  health: StoreHealth
  metrics: RelayMetrics
  now?: () => number
}
