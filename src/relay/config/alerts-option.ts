import { type ConfigProblems, listOf, objectOf, oneOf, type Rule, type RulesOf, secret } from '../kit/rules'

/** The alerts the relay sends (`alerts.events` picks some; all by default). */
export const ALERT_EVENTS = ['endpoint.failing', 'endpoint.recovered', 'delivery.failed'] as const
export type AlertEvent = (typeof ALERT_EVENTS)[number]

/** The `alerts` option: where the relay's alerts go, and which (docs/operations.md, "Alerts"). */
export interface AlertsOptions {
  /**
   * The http(s) URL each alert is POSTed to as JSON. Treated as a secret (chat webhooks carry
   * their token in the URL): never logged.
   */
  url: string
  /** The alerts to send. @default every one of {@link ALERT_EVENTS} */
  events?: readonly AlertEvent[]
}

const checkAlerts = objectOf<AlertsOptions>(
  {
    url: secret,
    events: listOf(oneOf(ALERT_EVENTS), 'alert events'),
  } satisfies RulesOf<AlertsOptions>,
  'an alerts setting',
)

/** The `alerts` option's rule: an object with an http(s) `url` and, optionally, `events`. */
export const alertsRule: Rule<AlertsOptions> = (value, field, problems: ConfigProblems) => {
  const checked = checkAlerts(value, field, problems)
  if (checked === undefined) return undefined
  if (checked.url === undefined) {
    if ((value as Record<string, unknown>)['url'] === undefined) problems.add(`${field}.url`, 'is required')
    return undefined
  }
  let protocol: string | undefined
  try {
    protocol = new URL(checked.url).protocol
  } catch {
    protocol = undefined
  }
  if (protocol !== 'http:' && protocol !== 'https:') {
    // The URL may carry a token: its value is never shown.
    problems.add(`${field}.url`, 'must be an http:// or https:// URL')
    return undefined
  }
  return { url: checked.url, ...(checked.events === undefined ? {} : { events: checked.events }) }
}
