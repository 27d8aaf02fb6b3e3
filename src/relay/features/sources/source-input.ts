import { isPlainObject } from '../../../shared/validate'
import type { RelayConfigProblem } from '../../errors'
import type { SourceDestinations, SourceSchema } from '../../config/options'
import { ConfigProblems } from '../../kit/rules'
import { keepMaskedSecrets, MASKED } from '../../sources/source-secrets'
import { checkSourceFields } from '../../config/validate'

/** A source as `PUT /v1/sources/:name` gives it, checked by the config file's rules. */
export interface SourceInput {
  enabled: boolean
  destinations: SourceDestinations
  schema: SourceSchema
  /** The key the body names: on create, the source's first; on replace, one it must have. */
  writeKey: string | undefined
}

/**
 * Checks a `PUT` body by the config file's rules (docs/relay.md, "Sources through the API"):
 * every problem with its path, none of them a secret's value. A `"***"` where a secret goes keeps
 * the one `stored` has at the same place (the same webhook URL and header name).
 */
export function readSourceInput(
  name: string,
  body: Record<string, unknown>,
  stored: SourceDestinations | undefined,
): { input: SourceInput } | { problems: RelayConfigProblem[] } {
  const problems = new ConfigProblems()
  const { enabled, ...fields } = body
  if (enabled !== undefined && typeof enabled !== 'boolean') problems.add('enabled', 'must be true or false')
  if (fields['name'] !== undefined && fields['name'] !== name)
    problems.add('name', `must be the name in the path (${JSON.stringify(name)}) when given`)
  let given = fields['destinations']
  if (isPlainObject(given)) {
    const kept = keepMaskedSecrets(given as SourceDestinations, stored)
    for (const path of kept.unmatched)
      problems.add(
        `destinations.Webhooks.${path}`,
        `is "${MASKED}", which keeps a stored secret, but none is stored there`,
      )
    given = kept.destinations
  }
  const checked = checkSourceFields({ ...fields, name, destinations: given }, '', problems) ?? {}
  // A function's file is read on the relay's host: the config file's to name. The API takes the code.
  const fn = checked.destinations?.Webhooks?.function
  if (fn !== undefined && 'file' in fn)
    problems.add(
      'destinations.Webhooks.function.file',
      'is read from the relay\'s host, so only the config file may name one: through the admin API give the code itself, { "code": "…" } (docs/functions.md)',
    )
  if (problems.list.length > 0) return { problems: problems.list }
  return {
    input: {
      enabled: enabled !== false,
      destinations: checked.destinations ?? {},
      // The whole schema: its blocked events and its tracking plan with their actions (docs/plans.md).
      schema: { ...checked.schema, blockedEvents: checked.schema?.blockedEvents ?? [] },
      writeKey: checked.writeKey,
    },
  }
}
