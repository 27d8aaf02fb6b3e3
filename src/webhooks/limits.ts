import { MAX_TIMER_MS } from '../shared/retry'

// The Webhooks destination's numeric limits, in a module that imports no class: the relay's options
// take their defaults and maxima from here, and bundling a copy of plain numbers into the relay's
// build (unlike settings.ts, which holds WebhookConfigError) keeps every class single.

/** One webhook request's time limit unless configured, ms (the relay's `webhookTimeout` too). */
export const DEFAULT_TIMEOUT_MS = 5000
/** The longest time limit of one webhook request, ms (the relay's `webhookTimeout` too). */
export const MAX_TIMEOUT_MS = MAX_TIMER_MS
/** How much of a failed request's answer is kept by default, bytes. */
export const DEFAULT_RESPONSE_BODY_LIMIT = 4096
/** The most of a failed request's answer that may be kept, bytes (the relay stores it with each attempt). */
export const MAX_RESPONSE_BODY_LIMIT = 65_536
