import { HttpError } from '../../http/http-error'
import type { AuditActor, AuditRecord } from '../../store/source-configs'
import type { SuppressionStore } from '../../store/suppressions'
import type { SuppressionFollower } from './suppression-follower'
import { LIFT_EVERY_SOURCE, liftScopeOf, type SuppressionRequest } from './suppression-request'

/**
 * How many users one call erases at once: on PostgreSQL each erasure is a few round trips, so
 * 5,000 in a row would hold the call for minutes; a few at a time leave the pool's other
 * connections to ingest and delivery.
 */
export const ERASE_CONCURRENCY = 4

/** What the suppression operations work on. */
export interface SuppressionsContext {
  store: SuppressionStore
  /** This relay's view of the suppressions, told of each change (it tells the other relays). */
  follower: SuppressionFollower
  /** Does what `POST /v1/deletions { userId }` does (docs/replay.md, "Erasure"). */
  erase: (userId: string) => Promise<void>
  now?: () => number
}

/** The answer to `POST /v1/suppressions`. */
export interface SuppressionsAdded {
  /** How many of the ids were newly suppressed (the others already were, there). */
  added: number
  /** How many users were erased (`erase: true`): every one of the ids. */
  erased?: number
}

/** One suppression as `GET /v1/suppressions` lists it. */
export interface SuppressionView {
  userId: string
  source?: string
  /** When it was made, ISO 8601 UTC. */
  at: string
}

/**
 * Suppresses the request's users, applies it on this relay and announces it to the others, then
 * (with `erase`) erases each: in that order, so a message that arrives meanwhile is either dropped
 * or erased. Erasure is repeatable: a call that failed part way may be sent again.
 */
export async function addSuppressions(
  context: SuppressionsContext,
  request: SuppressionRequest,
  actor: AuditActor,
): Promise<SuppressionsAdded> {
  const at = (context.now ?? Date.now)()
  const { source, erase } = request
  const changes = JSON.stringify({ source: source ?? null, erase })
  const audit = (userId: string): AuditRecord => ({ at, actor, action: 'suppression.added', target: userId, changes })
  const { changed } = await context.store.add({ userIds: request.userIds, source, at, audit })
  // Applied here even when nothing changed: a caller's next ingest must never see it not yet.
  await context.follower.changed()
  if (!erase) return { added: changed }
  const users = [...new Set(request.userIds)]
  let next = 0
  const eraseNext = async (): Promise<void> => {
    while (next < users.length) await context.erase(users[next++]!)
  }
  await Promise.all(Array.from({ length: Math.min(ERASE_CONCURRENCY, users.length) }, eraseNext))
  return { added: changed, erased: users.length }
}

/**
 * Lifts `userId`'s suppression of `source` (its own suppression of every source alone for
 * {@link LIFT_EVERY_SOURCE}; every one of theirs without it), here and, announced, on every relay.
 * @throws {HttpError} 404 `ERR_NOT_FOUND` when there was none.
 */
export async function removeSuppression(
  context: SuppressionsContext,
  userId: string,
  source: string | undefined,
  actor: AuditActor,
): Promise<{ userId: string; removed: number }> {
  const at = (context.now ?? Date.now)()
  const audit = (scope: string | undefined): AuditRecord => ({
    at,
    actor,
    action: 'suppression.removed',
    target: userId,
    changes: JSON.stringify({ source: scope ?? null }),
  })
  const { changed } = await context.store.remove({ userId, source: liftScopeOf(source), audit })
  if (changed === 0) {
    const where =
      source === undefined
        ? ''
        : source === LIFT_EVERY_SOURCE
          ? ' for every source'
          : ` for source ${JSON.stringify(source)}`
    throw new HttpError(404, 'ERR_NOT_FOUND', `user ${JSON.stringify(userId)} is not suppressed${where}`)
  }
  await context.follower.changed()
  return { userId, removed: changed }
}

/** The suppressions, oldest first: every one, or those made for `source`. */
export async function listSuppressions(
  context: SuppressionsContext,
  source: string | undefined,
): Promise<{ suppressions: SuppressionView[] }> {
  const all = await context.store.list()
  const chosen = source === undefined ? all : all.filter((s) => s.source === source)
  return {
    suppressions: chosen.map((s) => ({
      userId: s.userId,
      ...(s.source === undefined ? {} : { source: s.source }),
      at: new Date(s.at).toISOString(),
    })),
  }
}
