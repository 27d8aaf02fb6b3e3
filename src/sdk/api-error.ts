/** What an API's refusal says about itself: a relay answers `{ error: { code, message } }`. */
export interface ApiError {
  /** The API's own code for the refusal (a relay's `ERR_UNKNOWN_WRITE_KEY`, …), when it gives one. */
  code?: string
  /** Its reason, as one line of at most 300 characters. */
  message?: string
}

const MAX_REASON = 300

/**
 * The reason a refusal's body gives: the `error.code` and `error.message` of a JSON answer such as
 * the relay's (`{ error: { code, message } }`), or its `error` or `message` string, else the start
 * of the text. `undefined` when it says nothing.
 */
export function readApiError(body: string | undefined): ApiError | undefined {
  if (body === undefined || body.trim() === '') return undefined
  let code: unknown
  let message: unknown
  try {
    const parsed = JSON.parse(body) as unknown
    if (typeof parsed !== 'object' || parsed === null) message = body
    else {
      const { error, message: topMessage } = parsed as Record<string, unknown>
      if (typeof error === 'object' && error !== null) {
        code = (error as Record<string, unknown>)['code']
        message = (error as Record<string, unknown>)['message']
      } else message = error ?? topMessage
    }
  } catch {
    message = body
  }
  const found: ApiError = {}
  if (typeof code === 'string' && code !== '') found.code = oneLine(code)
  if (typeof message === 'string' && message.trim() !== '') found.message = oneLine(message)
  return found.code === undefined && found.message === undefined ? undefined : found
}

/** `unknown write key (ERR_UNKNOWN_WRITE_KEY)`, as an error message shows it. */
export function describeApiError(error: ApiError): string {
  if (error.message === undefined) return error.code!
  return error.code === undefined ? error.message : `${error.message} (${error.code})`
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim()
  return line.length > MAX_REASON ? `${line.slice(0, MAX_REASON)}…` : line
}
