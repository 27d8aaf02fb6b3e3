import { describe, expect, it } from 'vitest'

// Each entry's runtime exports, pinned: nothing reaches users by accident, and nothing they use
// disappears without this list (and the docs) changing with it.
const ENTRIES = {
  tracklet: [
    'Analytics',
    'AnalyticsError',
    'ClosedError',
    'DEFAULT_OPTIONS',
    'DeliveryError',
    'FilteredError',
    'InvalidMessageError',
    'MAX_BATCH_BYTES',
    'MAX_MESSAGE_BYTES',
    'MessageTooLargeError',
    'QueueFullError',
  ],
  'tracklet/webhooks': [
    'MAX_WEBHOOKS',
    'RETRY_WINDOW_MS',
    'STANDARD_WEBHOOK_TOLERANCE_SECONDS',
    'WebhookConfigError',
    'WebhookDestination',
    'WebhookError',
    'WebhookMessageError',
    'decideNextStep',
    'formatMessage',
    'nextAttemptAt',
    'sign',
    'signStandardWebhook',
    'verifySignature',
    'verifyStandardWebhook',
  ],
  'tracklet/relay': [
    'BlockedAddressError',
    'RelayConfigError',
    'RelayError',
    'classifyAddress',
    'createRelay',
    'loadRelayConfig',
  ],
} as const

const SOURCES: Record<keyof typeof ENTRIES, () => Promise<Record<string, unknown>>> = {
  tracklet: () => import('../src/index'),
  'tracklet/webhooks': () => import('../src/webhooks/index'),
  'tracklet/relay': () => import('../src/relay/index'),
}

describe('the public entries', () => {
  it.each(Object.keys(ENTRIES) as (keyof typeof ENTRIES)[])('%s exports exactly its documented API', async (entry) => {
    expect(Object.keys(await SOURCES[entry]()).sort()).toEqual([...ENTRIES[entry]].sort())
  })
})
