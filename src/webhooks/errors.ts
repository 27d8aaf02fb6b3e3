/**
 * `Error`'s options, spelt out: the global `ErrorOptions` type exists only from lib `es2022`, and
 * these typings must compile for a project whose target is `es2020`.
 */
export interface WebhookErrorOptions {
  /** The error that caused this one. */
  cause?: unknown
}

/** The base of the Webhooks destination's errors: `code` is stable, `message` is for people. */
export class WebhookError extends Error {
  /** A stable identifier for the kind of error, safe to branch on. */
  readonly code: string

  constructor(code: string, message: string, options?: WebhookErrorOptions) {
    super(message, options)
    this.name = new.target.name
    this.code = code
  }
}

/**
 * The destination's settings or options are invalid. Thrown at construction, so a bad
 * configuration never gets as far as a delivery. The message names the setting, the value
 * received (never a secret's value) and what is allowed.
 */
export class WebhookConfigError extends WebhookError {
  /** The path of the offending setting, such as `webhooks[1].url` or `options.timeout`. */
  readonly setting: string

  constructor(setting: string, problem: string) {
    super('ERR_WEBHOOK_CONFIG', `Invalid webhook setting ${setting}: ${problem}`)
    this.setting = setting
  }
}

/** A message cannot be turned into a webhook body (an unknown type, a missing field, no JSON). */
export class WebhookMessageError extends WebhookError {
  constructor(problem: string, options?: WebhookErrorOptions) {
    super('ERR_WEBHOOK_MESSAGE', `Cannot format the message for the Webhooks destination: ${problem}`, options)
  }
}
