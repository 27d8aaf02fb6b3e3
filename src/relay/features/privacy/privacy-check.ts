import type { RoutedSource } from '../../config/sources'
import type { CheckFindings, IngestCheck, IngestVerdict } from '../../ingest/ingest-check'
import { CONSENT_REASON, type ConsentSetting, consentGiven } from './consent'
import type { SuppressionSet } from './suppression-set'

/** The filtered reason of a suppressed user's message. */
export const SUPPRESSED_REASON = 'suppressed'

/** What the privacy check reads at each message: both may change while the relay runs. */
export interface PrivacyRules {
  /** The suppressed users now. */
  suppressed(): SuppressionSet
  /** The consent rule of each of the source's destinations that has one; none: nothing to check. */
  consentOf(source: string): ReadonlyMap<string, ConsentSetting> | undefined
}

// One object for every suppressed message: nothing is allocated for them.
const SUPPRESSED: CheckFindings = Object.freeze({ violations: Object.freeze([]), blocked: SUPPRESSED_REASON })

/**
 * Ingest's check with suppression and consent before `inner` (the tracking plans'): a suppressed
 * user's message is blocked (acknowledged, no delivery) before anything else looks at it, so no
 * violation of it is kept either; a message the plan lets through is withheld from each
 * destination whose consent rule it does not meet.
 */
export function privacyCheck(rules: PrivacyRules, inner?: IngestCheck): IngestCheck {
  const check: IngestCheck = (message, source) => {
    if (rules.suppressed().has(message['userId'], source.name)) return SUPPRESSED
    const verdict = inner?.(message, source)
    const consent = rules.consentOf(source.name)
    if (consent === undefined || typeof verdict === 'string' || verdict?.blocked !== undefined) return verdict
    return withConsent(verdict, consent, message, source)
  }
  return check
}

function withConsent(
  verdict: CheckFindings | undefined,
  consent: ReadonlyMap<string, ConsentSetting>,
  message: Readonly<Record<string, unknown>>,
  source: RoutedSource,
): IngestVerdict {
  let withheld: Map<string, string> | undefined
  for (const destination of source.destinations) {
    const setting = consent.get(destination)
    if (setting === undefined || consentGiven(setting, message)) continue
    withheld ??= new Map()
    withheld.set(destination, CONSENT_REASON)
  }
  if (withheld === undefined) return verdict
  return { ...(verdict ?? { violations: [] }), withheld }
}
