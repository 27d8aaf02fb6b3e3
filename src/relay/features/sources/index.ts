import type { ConsoleKit } from '../../console/page/operation-routes'
import type { Feature } from '../feature'
import { sourcePageRoutes } from './page/source-page-routes'
import { type SourceRoutesContext, sourceRoutes } from './source-routes'

/** What the sources admin API needs from the relay. */
export interface SourcesDeps extends SourceRoutesContext {
  /** The operator page's kit: the sources view is a section of the page. */
  page: ConsoleKit
}

/**
 * The sources admin API (docs/relay.md, "Sources through the API"): sources created, changed and
 * removed while the relay runs, their write keys and the audit log, as JSON (`/v1/sources`,
 * `/v1/audit`) and as the operator page's sources view (`/ui/sources`). The registry every area
 * reads sources from, and its sync between relays, sit beneath the areas in `src/relay/sources/`.
 */
export function sourcesFeature(deps: SourcesDeps): Feature {
  const { page, ...context } = deps
  return {
    name: 'sources',
    routes: sourceRoutes(context),
    page: {
      title: 'Sources',
      path: '/ui/sources',
      // The page's forms go through the page's own watch of the store (its outage page).
      routes: sourcePageRoutes(page, { ...context, store: page.context.store }),
    },
  }
}
