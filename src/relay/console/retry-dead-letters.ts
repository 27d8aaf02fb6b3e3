import { HttpError } from '../http/http-error'
import type { DeliveryFilter, RetryMatchingResult } from '../store/store'
import type { AdminContext } from './operations'

/**
 * Every dead letter `filter` matches queued again with a fresh retry window (with `dryRun`, only
 * counted), but those of a source that no longer exists: they would only fail again, so they wait
 * until a source of that name exists again, as a retry of one of them does (docs/relay.md,
 * "Sources through the API"). The admin API's `POST /v1/deliveries/retry` and the operator page's
 * "Retry all" both come through here.
 * @throws {HttpError} 409 `ERR_SOURCE_REMOVED` when the filter names such a source.
 */
export async function retryDeadLetters(
  context: Pick<AdminContext, 'store' | 'sources'>,
  filter: DeliveryFilter,
  options: { dryRun?: boolean } = {},
): Promise<RetryMatchingResult> {
  const present = new Set(context.sources.map((s) => s.name))
  const withDeadLetters = new Set(
    (await context.store.backlog()).filter((row) => row.status === 'failed').map((row) => row.source),
  )
  const gone = [...withDeadLetters].filter((source) => !present.has(source))
  if (filter.source !== undefined && gone.includes(filter.source))
    throw new HttpError(
      409,
      'ERR_SOURCE_REMOVED',
      `source ${JSON.stringify(filter.source)} no longer exists: its dead letters can be retried once a source of that name exists again`,
    )
  if (filter.source !== undefined || gone.length === 0) return context.store.retryMatching(filter, options)
  // Some dead letters are a gone source's: the others are retried source by source.
  let matched = 0
  let retried = 0
  for (const source of withDeadLetters) {
    if (!present.has(source)) continue
    const result = await context.store.retryMatching({ ...filter, source }, options)
    matched += result.matched
    retried += result.retried ?? 0
  }
  return options.dryRun ? { matched } : { matched, retried }
}
