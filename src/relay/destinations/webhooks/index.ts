import { didYouMean } from '../../../shared/nearest-name'
import {
  nextAttemptAt,
  RETRY_WINDOW_MS,
  WebhookConfigError,
  WebhookDestination,
  type WebhookSettings,
} from '../../../webhooks/index'
import { RelayConfigError } from '../../errors'
import type { DestinationModule, RetryPolicy } from '../destination'
import { webhookSender } from './sender'
import { splitWebhookLimits } from './limits'

/** The platform's retries: its schedule within its 4-hour window. */
export const WEBHOOK_RETRIES: RetryPolicy = Object.freeze({ schedule: nextAttemptAt, window: RETRY_WINDOW_MS })

/**
 * The Webhooks destination (`tracklet/webhooks`): each message POSTed, formatted as the platform
 * does and optionally signed, to up to five URLs; the URLs are its targets.
 */
export const webhooks: DestinationModule<WebhookSettings> = {
  name: 'Webhooks',
  parseSettings(raw, path) {
    // The relay's per-URL limits first: every problem of theirs named, then the destination's.
    const { settings } = splitWebhookLimits(raw, path)
    try {
      // Building one is cheap and sends nothing: its constructor is the settings' validation, so
      // a setting it would refuse at start is refused when the config is read.
      new WebhookDestination(settings as WebhookSettings)
    } catch (error) {
      if (!(error instanceof WebhookConfigError)) throw error
      const prefix = `Invalid webhook setting ${error.setting}: `
      const problem = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message
      const field = error.setting === 'settings' ? path : `${path}.${error.setting}`
      throw new RelayConfigError(field, withHint(problem, error.setting), { cause: error })
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
    const { settings, limits } = splitWebhookLimits(raw, 'settings')
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
