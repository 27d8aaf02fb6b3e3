import { env, stderr, stdout } from 'node:process'
import { Analytics, type AnalyticsError, type MessageCallback } from '../index'
import { DEFAULT_OPTIONS } from '../sdk/options'
import { redactWriteKeys } from './redact'
import { SendProgress } from './send-progress'
import { parseSendArgs, SEND_USAGE, type SendRequest } from './send-args'
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE } from './exit-codes'

/**
 * `tracklet send`: sends one message through the SDK (`flushAt: 1`) and waits, for at most
 * `--timeout` ms, for its callback. Returns the exit code: 0 only when the endpoint accepted the
 * message. Everything printed has the write key redacted where it stands as a value.
 */
export async function runSend(args: string[]): Promise<number> {
  const parsed = parseSendArgs(args, env)
  if (parsed.kind === 'help') {
    stdout.write(`${SEND_USAGE}\n`)
    return EXIT_OK
  }
  if (parsed.kind === 'invalid') {
    stderr.write(`tracklet send: ${parsed.problem} (see tracklet send --help)\n`)
    return EXIT_USAGE
  }
  const { request } = parsed
  const redact = (text: string) => redactWriteKeys(text, [request.writeKey])

  let analytics: Analytics
  try {
    analytics = new Analytics(request.writeKey, {
      flushAt: 1,
      ...(request.endpoint === undefined ? {} : { endpoint: request.endpoint }),
    })
  } catch (error) {
    stderr.write(redact(`tracklet send: ${describeError(error)} (see tracklet send --help)\n`))
    return EXIT_USAGE
  }
  const progress = new SendProgress((line) => stderr.write(redact(`${line}\n`)))

  const outcome = send(analytics, request)
  // closeAndFlush's timeout is the bound on the whole send, retries included: once it passes,
  // the request is aborted and the message fails with ERR_CLOSED, so the callback has been
  // called by the time it resolves. It also releases the client's sockets and timers.
  await analytics.closeAndFlush({ timeout: request.timeout })
  const { error, messageId } = await outcome
  progress.stop()

  if (error !== undefined) {
    // ERR_CLOSED: closeAndFlush's deadline, the only way this client is closed under a message.
    const why =
      error.code === 'ERR_CLOSED'
        ? `timed out after ${request.timeout} ms (--timeout) before the endpoint accepted it${lastCause(progress)}`
        : `was not accepted: ${describeError(error)}`
    stderr.write(redact(`tracklet send: the ${request.type} message ${why}\n`))
    return EXIT_FAILED
  }
  // Accepted, not delivered: delivery to destinations is the endpoint's (a relay's) job, later.
  stdout.write(redact(`tracklet send: ${request.type} ${messageId} accepted by ${shownEndpoint(request.endpoint)}\n`))
  return EXIT_OK
}

/** Makes the `request.type` call and resolves when its callback reports the outcome. */
function send(
  analytics: Analytics,
  request: SendRequest,
): Promise<{ error: AnalyticsError | undefined; messageId: string }> {
  // The fields were checked by parseSendArgs with the same rules as the SDK's for this type,
  // so the call's own parameter type is satisfied; TypeScript cannot see that through a union.
  const call = analytics[request.type].bind(analytics) as (fields: object, callback: MessageCallback) => void
  return new Promise((resolve) => {
    call(request.fields, (error, message) => resolve({ error, messageId: message.messageId }))
  })
}

/** Why the last attempt before a timeout failed, when the network said (`ECONNREFUSED`, …). */
function lastCause(progress: SendProgress): string {
  if (progress.lastNetworkError !== undefined) return `; last attempt: ${describeError(progress.lastNetworkError)}`
  return progress.lastStatus === undefined ? '' : `; last answer: HTTP ${progress.lastStatus}`
}

/** The endpoint as it may be printed: no user info, query or fragment (they can hold secrets). */
function shownEndpoint(endpoint: string | undefined): string {
  const url = new URL(endpoint ?? DEFAULT_OPTIONS.endpoint)
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`
}

/** The error's message, its `code`, its HTTP `status` and its `cause`, as far as it has them. */
function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const { code, status } = error as Error & { code?: unknown; status?: unknown }
  const details = [
    typeof code === 'string' ? code : undefined,
    typeof status === 'number' && !error.message.includes(String(status)) ? `HTTP ${status}` : undefined,
  ].filter((detail) => detail !== undefined)
  let text = details.length > 0 ? `${error.message} (${details.join(', ')})` : error.message
  if (error.cause !== undefined) text += `; caused by: ${describeError(error.cause)}`
  return text
}
