import { serialize } from '../../../../shared/json'
import type { DeliverableMessage } from '../../../../shared/message'
import { formatMessage, sign, type WebhookSettings } from '../../../../webhooks/index'
import type { ForwardedMessage } from './events'

/**
 * A message as the source's Webhooks destination would send it: the body it would POST and the
 * `X-Signature` it would sign it with, computed here so that `tracklet tail --forward-to` can
 * replay it to a developer's receiver without the shared secret ever leaving the relay.
 * `undefined` when the message cannot be formatted (it is then not forwarded).
 */
export function forwardedMessage(
  message: DeliverableMessage,
  settings: WebhookSettings | undefined,
): ForwardedMessage | undefined {
  let body: string
  try {
    const serialized = serialize(formatMessage(message))
    if (!serialized.ok) return undefined
    body = serialized.json
  } catch {
    return undefined
  }
  const forwarded: ForwardedMessage = { messageId: String(message['messageId']), body }
  if (settings?.sharedSecret !== undefined) forwarded.signature = sign(body, settings.sharedSecret)
  return forwarded
}
