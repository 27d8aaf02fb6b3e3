import type { WebhookConfigError } from './errors'

/**
 * The key under which the Webhooks destination's class offers every problem of a set of settings
 * (where its constructor throws only the first). For the relay only, not part of the package's API:
 * a registry symbol, as `SEND_STORED` (stored.ts) is, so the relay reaches the function through the
 * class it loads from the webhooks entry, and the errors it returns are the classes users import
 * (a direct import would put a second copy of the errors into the relay's CommonJS bundle).
 * Versioned: a change to the signature takes a new key.
 */
export const CONFIG_PROBLEMS: unique symbol = Symbol.for('tracklet.webhooks.configProblems.v1')

/** The Webhooks destination's class, as the relay sees it. */
export interface ListsConfigProblems {
  [CONFIG_PROBLEMS](settings: unknown): WebhookConfigError[]
}
