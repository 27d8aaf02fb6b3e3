// The Webhooks destination's public API (tracklet/webhooks). Everything users reach is named here.
export { WebhookDestination, type DeliveryResult } from './destination'
export type { DeliveryAttempt } from './post'
export { formatMessage, type WebhookBody } from './format'
export { sign, verifySignature } from './sign'
export {
  signStandardWebhook,
  verifyStandardWebhook,
  STANDARD_WEBHOOK_TOLERANCE_SECONDS,
  type StandardWebhookInput,
  type IncomingHeaders,
  type VerifyStandardWebhookOptions,
} from './standard-webhooks'
export { nextAttemptAt, RETRY_WINDOW_MS, type RetryState } from './retry-schedule'
export { decideNextStep, type AttemptFacts, type RetryDecision } from './retry-rule'
export {
  MAX_WEBHOOKS,
  type WebhookSettings,
  type WebhookEntry,
  type StandardWebhooksSettings,
  type WebhookDestinationOptions,
} from './settings'
export { WebhookError, WebhookConfigError, WebhookMessageError } from './errors'
export type { DeliverableMessage, DeleteMessage, Message } from '../shared/message'
