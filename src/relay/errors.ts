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

/** One thing wrong in the relay's options: the field's path and what is wrong with it. */
export interface RelayConfigProblem {
  /** The path of the field, such as `sources[0].destination`. */
  readonly field: string
  /** What is wrong, as a sentence (never a secret's value). */
  readonly message: string
}

/**
 * The relay's options (or the CLI's config file) are invalid: `field` names the (first) offending
 * one as a path such as `sources[0].writeKey`, and `problems` lists every problem found, so a
 * config is fixed in one go. The message has one `field: problem` line per problem. Raised by
 * `createRelay` before anything is opened.
 */
export class RelayConfigError extends RelayError {
  /** The path of the (first) invalid field, such as `sources[0].destinations.Webhooks`. */
  readonly field: string
  /** Every problem found, in the order of the options; `field` is the first one's. */
  readonly problems: readonly RelayConfigProblem[]

  constructor(field: string, message: string, options?: { cause?: unknown; problems?: readonly RelayConfigProblem[] }) {
    const problems = options?.problems?.length ? options.problems : [{ field, message }]
    super(
      'ERR_RELAY_CONFIG',
      problems.map((problem) => `${problem.field}: ${problem.message}`).join('\n'),
      options?.cause === undefined ? undefined : { cause: options.cause },
    )
    this.name = 'RelayConfigError'
    this.field = problems[0]!.field
    this.problems = Object.freeze(problems.map((problem) => Object.freeze({ ...problem })))
  }
}
