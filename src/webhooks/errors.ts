/** The base of the Webhooks destination's errors: `code` is stable, `message` is for people. */
export class WebhookError extends Error {
  /** A stable identifier for the kind of error, safe to branch on. */
  readonly code: string

  constructor(code: string, message: string, options?: ErrorOptions) {
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
  constructor(problem: string, options?: ErrorOptions) {
    super('ERR_WEBHOOK_MESSAGE', `Cannot format the message for the Webhooks destination: ${problem}`, options)
  }
}
