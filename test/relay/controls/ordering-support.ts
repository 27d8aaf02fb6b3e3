import type { CountingReceiver } from './receiver'

/**
 * The inversions among what `receiver` received, for messages sent in the order of `sent` (each
 * `{ id, user }`): a later message of a user whose first arrival came before an earlier message's
 * last arrival (at-least-once: a message sent again after a kill counts at its last arrival).
 */
export function inversions(
  receiver: Pick<CountingReceiver, 'ids'>,
  sent: readonly { id: string; user: string }[],
): number {
  const first = new Map<string, number>()
  const last = new Map<string, number>()
  receiver.ids.forEach((id, index) => {
    if (!first.has(id)) first.set(id, index)
    last.set(id, index)
  })
  let count = 0
  const byUser = new Map<string, string[]>()
  for (const { id, user } of sent) byUser.set(user, [...(byUser.get(user) ?? []), id])
  for (const ids of byUser.values()) {
    for (let j = 1; j < ids.length; j++) {
      const arrived = first.get(ids[j]!)
      if (arrived === undefined) continue
      for (let i = 0; i < j; i++) if ((last.get(ids[i]!) ?? Number.POSITIVE_INFINITY) > arrived) count++
    }
  }
  return count
}

/** `users` users' messages interleaved, `perUser` each: `{ id, user }` in the order they are sent. */
export function interleaved(prefix: string, users: number, perUser: number): { id: string; user: string }[] {
  return Array.from({ length: users * perUser }, (_, n) => ({
    id: `${prefix}-${n % users}-${Math.floor(n / users)}`,
    user: `${prefix}-user-${n % users}`,
  }))
}
