import { readFile } from 'node:fs/promises'
import { dirname, isAbsolute, resolve } from 'node:path'
import { RelayConfigError } from '../errors'
import type { RelayOptions } from './options'
import { isPostgresUrl } from './database-value'
import { expandEnvReferences } from './env-references'
import { whereJsonBreaks } from './json-error'
import { ConfigProblems } from './rules'
import { validateRelayOptions } from './validate'

/**
 * Reads and validates a relay config file: JSON with the same keys as {@link RelayOptions}, any
 * string value of which may be or contain `"${NAME}"`, read from the environment variable `NAME`
 * (so the file holds no secret). Returns the options as given, references replaced, without
 * defaults filled in (so a caller can tell whether the file names a `database`). A relative
 * `database` path is taken from the file's folder, not the working directory.
 *
 * @param env where `${NAME}` references are read from.
 * @throws {RelayConfigError} when the file cannot be read or is not JSON, or listing every
 * invalid field and unset variable (`sources[0].writeKey: … (in relay.json)`), never a value.
 */
export async function loadRelayConfig(
  path: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<RelayOptions> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    throw new RelayConfigError(path, `cannot read the config file: ${(error as Error).message}`, { cause: error })
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    // The parser's reason, never the text around the mistake that its message quotes (a secret?).
    throw new RelayConfigError(path, `is not valid JSON${whereJsonBreaks(text, error)}`)
  }
  const problems = new ConfigProblems()
  const expanded = expandEnvReferences(parsed, env, problems)
  try {
    validateRelayOptions(expanded, problems)
  } catch (error) {
    if (!(error instanceof RelayConfigError)) throw error
    const inFile = error.problems.map((problem) => ({ ...problem, message: `${problem.message} (in ${path})` }))
    throw new RelayConfigError(error.field, inFile[0]!.message, { problems: inFile })
  }
  const options = functionFilesFrom(expanded as RelayOptions, dirname(path))
  const { database } = options
  if (database !== undefined && database !== ':memory:' && !isPostgresUrl(database) && !isAbsolute(database)) {
    return { ...options, database: resolve(dirname(path), database) }
  }
  return options
}

// A destination's `function.file` is taken from the config file's folder, as `database` is.
function functionFilesFrom(options: RelayOptions, folder: string): RelayOptions {
  return {
    ...options,
    sources: options.sources.map((source) => {
      const webhooks = source.destinations?.Webhooks
      const fn = webhooks?.function
      if (webhooks === undefined || fn === undefined || !('file' in fn) || isAbsolute(fn.file)) return source
      return {
        ...source,
        destinations: {
          ...source.destinations,
          Webhooks: { ...webhooks, function: { file: resolve(folder, fn.file) } },
        },
      }
    }),
  }
}
