import { log, plural } from '../log'
import { isDataError } from '../store/data-error'
import type { NewDelivery, Store } from '../store/store'
import type { NewViolation, ViolationStore } from '../store/violations'
import { TurnBatch } from './turn-batch'

/** What one request commits: its deliveries and the violations tracking plans found in it. */
interface Commit {
  deliveries: readonly NewDelivery[]
  violations: readonly NewViolation[]
}

/** The outbox as group commit writes to it: `violations` where it keeps them. */
export type CommitStore = Pick<Store, 'enqueue' | 'enqueueWithViolations'> & {
  kind?: Store['kind']
  violations?: Pick<ViolationStore, 'record'>
}

/**
 * The most groups written at once to PostgreSQL ({@link TurnBatch}'s `maxWriting`): one commits
 * while the next is written. Each transaction costs the server a fixed part (the function's call,
 * its look-up in each partition, the commit): `bench/pg-enqueue.mjs` spent 53.3–53.7 µs of server
 * CPU per message in groups of 200 on 3 connections, 46.7–49.0 in groups of 400 on 2.
 */
export const POSTGRES_GROUPS_WRITING = 2

/**
 * The most groups written at once to SQLite: one, committed and then flushed (its `enqueue`
 * resolves after the WAL's flush), while the requests of the next gather. Each commit writes every
 * page its group dirtied to the WAL, and under random message ids that is about a page of the
 * unique index per message until the group outgrows the index: fewer, larger groups write fewer
 * pages per message. Unbounded, a request that arrived during a flush was committed in a group of
 * its own (100–800 messages, `bench/ingest-only.mjs`); one at a time, 100–700 alternated and the
 * relay spent 0.94–0.97× the CPU per message at the same rate (docs/sqlite.md, "What ingest
 * costs"). A commit made during a flush waited for the next flush all the same; what an answer
 * may wait longer is its group's commit, no longer made while the previous group flushed.
 */
export const SQLITE_GROUPS_WRITING = 1

const GROUPS_WRITING: Record<Store['kind'], number> = {
  postgres: POSTGRES_GROUPS_WRITING,
  sqlite: SQLITE_GROUPS_WRITING,
}

/**
 * Group commit for ingest: the deliveries of every request that reaches the commit in the same
 * turn of the event loop are written in one transaction ({@link TurnBatch}). A 2xx still means
 * "committed": each request's promise resolves only once its transaction is.
 *
 * The violations found in those requests go with them: in the same transaction where the store
 * can (`Store.enqueueWithViolations`), otherwise in one write right after it, in the same group. A
 * failed write of violations loses the record, never the messages: they stay accepted and the log
 * says how many went unrecorded.
 *
 * A group that fails because of its data ({@link isDataError}: one request's message the store
 * cannot hold) is written again one request per transaction, so only the request that carried the
 * data is refused; any other failure (the database is down, the disk full) refuses the whole
 * group at once.
 */
export class GroupCommit extends TurnBatch<Commit> {
  constructor(store: CommitStore) {
    super({
      write: (commits) => write(store, commits),
      writeEachOn: isDataError,
      maxWriting: store.kind === undefined ? undefined : GROUPS_WRITING[store.kind],
    })
  }

  /**
   * Resolves once `deliveries` (and the `violations` found in their messages) are committed;
   * rejects if the transaction holding the deliveries failed.
   */
  commit(deliveries: readonly NewDelivery[], violations: readonly NewViolation[] = []): Promise<void> {
    if (deliveries.length === 0 && violations.length === 0) return Promise.resolve()
    return this.add([{ deliveries, violations }])
  }
}

async function write(store: CommitStore, commits: readonly Commit[]): Promise<void> {
  const deliveries = commits.length === 1 ? commits[0]!.deliveries : commits.flatMap((c) => c.deliveries)
  const violations = commits.length === 1 ? commits[0]!.violations : commits.flatMap((c) => c.violations)
  if (violations.length === 0) {
    await store.enqueue(deliveries)
    return
  }
  const unrecorded = (error: Error) => logUnrecorded(violations.length, error)
  if (store.enqueueWithViolations !== undefined) {
    await store.enqueueWithViolations(deliveries, violations, unrecorded)
    return
  }
  if (deliveries.length > 0) await store.enqueue(deliveries)
  try {
    if (store.violations === undefined) throw new Error('the store keeps no violations')
    await store.violations.record(violations)
  } catch (error) {
    unrecorded(error as Error)
  }
}

// The messages are committed: sending them again would not bring the record back.
function logUnrecorded(count: number, error: Error): void {
  log.error(`could not record ${plural(count, 'tracking plan violation')}: ${error.message}`, {
    event: 'violations-unrecorded',
    count,
  })
}
