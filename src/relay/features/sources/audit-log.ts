import { HttpError } from '../../http/http-error'
import type { AuditRow } from '../../store/source-configs'
import type { Store } from '../../store/store'
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../../console/find'
import { STORE_ID_PATTERN } from '../../store/store-id'

/** One entry of `GET /v1/audit` (docs/relay.md, "Audit"). */
export interface AuditEntry {
  at: string
  actor: string
  action: string
  target: string
  changes: unknown
}

const CODE = 'ERR_INVALID_QUERY'

/**
 * `GET /v1/audit?limit&cursor`: every configuration change, newest first, a page at a time as
 * `GET /v1/deliveries` pages (`next` is the cursor of the next page, `null` on the last).
 */
export async function handleAudit(
  store: Store,
  query: URLSearchParams,
): Promise<{ entries: AuditEntry[]; next: string | null }> {
  for (const name of query.keys())
    if (name !== 'limit' && name !== 'cursor')
      throw new HttpError(400, CODE, `${name} is not a query parameter of /v1/audit (known: limit, cursor)`)
  const limit = limitOf(query.get('limit'))
  const before = cursorOf(query.get('cursor'))
  // One more than the page: whether there is a next page, without a second query.
  const rows = await store.sourceConfigs.audit({ before, limit: limit + 1 })
  const page = rows.slice(0, limit)
  const last = page.at(-1)
  return {
    entries: page.map(entryOf),
    next: rows.length > limit && last !== undefined ? Buffer.from(`a${last.id}`).toString('base64url') : null,
  }
}

function entryOf(row: AuditRow): AuditEntry {
  return {
    at: new Date(row.at).toISOString(),
    actor: row.actor,
    action: row.action,
    target: row.target,
    changes: JSON.parse(row.changes) as unknown,
  }
}

// A cursor: `a` and the last audit entry's id, base64url.
const AUDIT_CURSOR = new RegExp(`^a(${STORE_ID_PATTERN})$`)

function cursorOf(raw: string | null): number | undefined {
  if (raw === null) return undefined
  const match = AUDIT_CURSOR.exec(Buffer.from(raw, 'base64url').toString('utf8'))
  if (match === null) throw new HttpError(400, CODE, 'cursor is not a cursor this relay gave (use the next of a page)')
  return Number(match[1])
}

function limitOf(raw: string | null): number {
  if (raw === null) return DEFAULT_PAGE_SIZE
  const value = /^\d{1,4}$/.test(raw) ? Number(raw) : Number.NaN
  if (!(value >= 1 && value <= MAX_PAGE_SIZE))
    throw new HttpError(400, CODE, `limit must be an integer from 1 to ${MAX_PAGE_SIZE}, got ${JSON.stringify(raw)}`)
  return value
}
