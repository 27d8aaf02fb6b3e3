/** Every error the relay raises: a stable `code` to branch on, and the original `cause` kept. */
export class RelayError extends Error {
  /** A stable identifier, such as `ERR_RELAY_CONFIG`. */
  readonly code: string

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'RelayError'
    this.code = code
  }
}

/**
 * The relay's options (or the CLI's config file) are invalid: `field` names the offending one as
 * a path such as `sources[0].writeKey`. Raised by `createRelay` before anything is opened.
 */
export class RelayConfigError extends RelayError {
  /** The path of the invalid field, such as `sources[0].destinations.Webhooks`. */
  readonly field: string

  constructor(field: string, message: string, options?: { cause?: unknown }) {
    super('ERR_RELAY_CONFIG', `${field}: ${message}`, options)
    this.name = 'RelayConfigError'
    this.field = field
  }
}
