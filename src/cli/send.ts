import { env, stderr, stdout } from 'node:process'
import { Analytics, type MessageCallback } from '../index'
import { parseSendArgs, SEND_USAGE, type SendRequest } from './send-args'

/** Exit codes: 0 delivered (or help), 1 not delivered, 2 bad arguments (as `main.ts` uses). */
const EXIT_OK = 0
const EXIT_NOT_DELIVERED = 1
const EXIT_USAGE = 2

/**
 * `tracklet send`: sends one message through the SDK (`flushAt: 1`) and waits for its callback.
 * Returns the exit code: 0 only when the message was delivered. Everything printed has the write
 * key redacted, whatever an error message might contain.
 */
export async function runSend(args: string[]): Promise<number> {
  const parsed = parseSendArgs(args, env)
  if (parsed.kind === 'help') {
    stdout.write(`${SEND_USAGE}\n`)
    return EXIT_OK
  }
  if (parsed.kind === 'invalid') {
    stderr.write(`tracklet send: ${parsed.problem}\n(tracklet send --help lists the flags)\n`)
    return EXIT_USAGE
  }
  const { request } = parsed
  const redact = (text: string) => text.replaceAll(request.writeKey, '[write key]')

  let analytics: Analytics
  try {
    analytics = new Analytics(request.writeKey, {
      flushAt: 1,
      ...(request.endpoint === undefined ? {} : { endpoint: request.endpoint }),
    })
  } catch (error) {
    stderr.write(redact(`tracklet send: ${describeError(error)}\n`))
    return EXIT_USAGE
  }

  const outcome = await deliver(analytics, request)
  // Release the client's sockets and timers; the message has settled, so this is quick.
  await analytics.closeAndFlush()

  if (outcome.error !== undefined) {
    stderr.write(
      redact(`tracklet send: the ${request.type} message was not delivered: ${describeError(outcome.error)}\n`),
    )
    return EXIT_NOT_DELIVERED
  }
  stdout.write(`tracklet send: delivered ${request.type} ${outcome.messageId}\n`)
  return EXIT_OK
}

/** Makes the `request.type` call and resolves when its callback reports the outcome. */
function deliver(analytics: Analytics, request: SendRequest): Promise<{ error: Error | undefined; messageId: string }> {
  // The fields were checked by parseSendArgs with the same rules as the SDK's for this type,
  // so the call's own parameter type is satisfied; TypeScript cannot see that through a union.
  const call = analytics[request.type].bind(analytics) as (fields: object, callback: MessageCallback) => void
  return new Promise((resolve) => {
    call(request.fields, (error, message) => resolve({ error, messageId: message.messageId }))
  })
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
