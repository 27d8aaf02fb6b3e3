import { didYouMean } from '../../../shared/nearest-name'
import { isPlainObject } from '../../../shared/validate'
import {
  nextAttemptAt,
  RETRY_WINDOW_MS,
  type WebhookConfigError,
  WebhookDestination,
  type WebhookSettings,
} from '../../../webhooks/index'
import { CONFIG_PROBLEMS, type ListsConfigProblems } from '../../../webhooks/config-problems-key'
import { RelayConfigError, type RelayConfigProblem } from '../../errors'
import type { DestinationModule, RetryPolicy } from '../destination'
import { webhookSender } from './sender'
import { withoutLimits } from '../limit-settings'
import { splitWebhookLimits } from './limits'
import { checkOrdered, withoutOrdered } from '../ordered-setting'
import { ConfigProblems } from '../../kit/rules'

/** The platform's retries: its schedule within its 4-hour window. */
export const WEBHOOK_RETRIES: RetryPolicy = Object.freeze({ schedule: nextAttemptAt, window: RETRY_WINDOW_MS })

/**
 * The Webhooks destination (`tracklet/webhooks`): each message POSTed, formatted as the platform
 * does and optionally signed, to up to five URLs; the URLs are its targets.
 */
export const webhooks: DestinationModule<WebhookSettings> = {
  name: 'Webhooks',
  parseSettings(raw, path) {
    // The relay's per-URL limits and the destination's own settings: every problem of both named.
    const problems: RelayConfigProblem[] = []
    // Ordered delivery per user is the relay's too (docs/delivery-controls.md, "Ordering").
    const ordering = new ConfigProblems()
    checkOrdered(raw, path, ordering)
    problems.push(...ordering.list)
    let settings: unknown
    try {
      settings = splitWebhookLimits(withoutOrdered(raw), path).settings
    } catch (error) {
      if (!(error instanceof RelayConfigError)) throw error
      problems.push(...error.problems)
      settings = withoutEveryLimit(withoutOrdered(raw))
    }
    // The destination's own checks, every problem of them: its constructor throws only the first.
    const found = configProblems(settings)
    for (const error of found) {
      const prefix = `Invalid webhook setting ${error.setting}: `
      const problem = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message
      const field = error.setting === 'settings' ? path : `${path}.${error.setting}`
      problems.push({ field, message: withHint(problem, error.setting) })
    }
    const first = problems[0]
    if (first !== undefined) {
      throw new RelayConfigError(first.field, first.message, { cause: found[0], problems })
    }
    // A deep copy, so later changes to the caller's objects never reach the running relay.
    return structuredClone(raw) as WebhookSettings
  },
  secrets(settings) {
    const found: (string | undefined)[] = [settings.sharedSecret]
    if (typeof settings.standardWebhooks === 'object') found.push(...settings.standardWebhooks.secrets)
    // Static header values often carry an API key.
    for (const entry of settings.webhooks ?? []) found.push(...Object.values(entry.headers ?? {}))
    return found.filter((secret): secret is string => typeof secret === 'string' && secret.length > 0)
  },
  create(raw, context) {
    const { settings, limits } = splitWebhookLimits(withoutOrdered(raw), 'settings')
    const destination = new WebhookDestination(settings as WebhookSettings, {
      timeout: context.limits.timeout,
      dispatcher: context.agent,
      responseBodyLimit: context.limits.responseBodyLimit,
    })
    return { ...webhookSender(destination, WEBHOOK_RETRIES), limits }
  },
}

// The destination lists the keys it allows in its own message ("allowed: url, headers"); the
// nearest of them is named as everywhere else in the config.
function withHint(problem: string, setting: string): string {
  const allowed = /is not a known setting; allowed: (.+)$/.exec(problem)?.[1]
  if (allowed === undefined) return problem
  return `${problem}${didYouMean(setting.split('.').at(-1)!, allowed.split(', '))}`
}

// The settings without any webhook's limits, for the destination's checks once the limits were refused.
function withoutEveryLimit(raw: unknown): unknown {
  if (!isPlainObject(raw) || !Array.isArray(raw['webhooks'])) return raw
  const webhooks = raw['webhooks'].map((entry: unknown) => (isPlainObject(entry) ? withoutLimits(entry) : entry))
  return { ...raw, webhooks }
}

// Every problem of the destination's own settings, through the class the relay loads from the
// webhooks entry: the relay never bundles a copy of it, so its errors are the classes users import.
function configProblems(settings: unknown): WebhookConfigError[] {
  const list = (WebhookDestination as unknown as Partial<ListsConfigProblems>)[CONFIG_PROBLEMS]
  // Both come from one build of the package; a mix of builds is not something to guess around.
  if (list === undefined) throw new Error('tracklet/webhooks does not match tracklet/relay: reinstall tracklet')
  return list(settings)
}
