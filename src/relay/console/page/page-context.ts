import type { AdminToken } from '../../http/auth'
import type { AuthLimiter } from '../../http/auth-limiter'
import type { HealthReport, LastHour, RecentRates } from '../../events/readings'
import type { AdminContext } from '../operations'
import type { SourcesContext } from '../../features/sources/sources-api'
import type { Route } from '../../http/route'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Handler } from '../../http/route'
import type { Session, Sessions } from './sessions'

/** What the operator page works on. */
export interface PageContext extends AdminContext {
  adminToken: AdminToken
  /** Counts failed sign-ins per client address, and refuses an address over its failures. */
  authLimiter: AuthLimiter
  /** Whether the store takes writes (what /healthz answers). */
  health: { report(): HealthReport }
  /** The rates the overview shows, and its charts of the last hour. */
  metrics: { recentRates(): RecentRates | Promise<RecentRates>; lastHour(): LastHour }
  now?: () => number
  /** The sources and how a change is stored and spread: the sources view and its actions. */
  sourceAdmin?: Omit<SourcesContext, 'store'>
  /** Features' views of the page (privacy's `/ui/suppressions`), on the page's sessions. */
  sections?: readonly ((kit: ConsoleKit) => Route[])[]
}

/** What the console's views share with the rest of the page. */
export interface ConsoleKit {
  context: PageContext
  sessions: Sessions
  /** Renders a refusal as a page. */
  page: (handler: Handler) => Handler
  /** The session of a state-changing request, checked for origin and CSRF token. */
  postedSession: (req: IncomingMessage, form: URLSearchParams) => Promise<Session>
  showSignIn: (res: ServerResponse, url: URL) => void
  now: () => number
}
