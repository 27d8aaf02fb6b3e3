import { createHash } from 'node:crypto'

/**
 * Who a message is about for ordered delivery (docs/delivery-controls.md, "Ordering"): its
 * `userId`, else its `anonymousId`; `undefined` when it has neither (ingest refuses such
 * messages, but an audience's or a deletion's deliveries may lack both): such a message is not
 * held, and holds nothing.
 */
export function orderedUserOf(message: Readonly<Record<string, unknown>>): string | undefined {
  for (const field of ['userId', 'anonymousId']) {
    const value = message[field]
    if (typeof value === 'string' && value !== '') return value
  }
  return undefined
}

/**
 * The ordering key of a delivery to an ordered destination: the same for every delivery of one
 * user to one destination of one source, stored with it so that the store's claim holds a user's
 * later deliveries behind the earlier one still pending. A hash (22 characters, 132 bits), so the
 * column and its index are small whatever the ids' lengths, and a user id is not copied into it.
 */
export function orderKeyOf(
  source: string,
  destination: string,
  message: Readonly<Record<string, unknown>>,
): string | undefined {
  const user = orderedUserOf(message)
  if (user === undefined) return undefined
  return createHash('sha256')
    .update(JSON.stringify([source, destination, user]))
    .digest('base64url')
    .slice(0, 22)
}
