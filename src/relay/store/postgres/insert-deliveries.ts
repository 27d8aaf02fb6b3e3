import type { PoolClient } from 'pg'
import { searchKeys } from '../rows'
import type { NewDelivery } from '../store'
import { joinBodies } from './message-bodies'
import { prepared } from './prepared'

// Writes new deliveries in one statement, on a transaction's connection: the messages' locks and
// the insert are one function call (./enqueue-function.ts).
export async function insertDeliveries(
  client: Pick<PoolClient, 'query'>,
  deliveries: readonly NewDelivery[],
  clock: number | null,
): Promise<number> {
  const sources: string[] = []
  const destinations: string[] = []
  const messageIds: string[] = []
  const types: string[] = []
  const userIds: (string | null)[] = []
  const events: (string | null)[] = []
  for (const d of deliveries) {
    const keys = searchKeys(d)
    userIds.push(keys.userId)
    events.push(keys.event)
    sources.push(d.source)
    destinations.push(d.destination)
    messageIds.push(d.messageId)
    types.push(d.type)
  }
  const bodies = joinBodies(deliveries)
  const values = [sources, destinations, messageIds, types, bodies, userIds, events, clock]
  const ordered = deliveries.some((d) => d.orderKey !== undefined)
  const statement = ordered
    ? prepared('enqueueOrdered', [...values, deliveries.map((d) => d.orderKey ?? null)])
    : prepared('enqueue', values)
  const { rows } = await client.query<{ written: string }>(statement)
  return Number(rows[0]?.written ?? 0)
}
