import { readFile } from 'node:fs/promises'
import { dirname, isAbsolute, resolve } from 'node:path'
import { RelayConfigError } from './errors'
import { type RelayOptions, resolveRelayOptions } from './options'
import { isPostgresUrl } from './store/open-store'

/**
 * Reads and validates a relay config file: JSON with the same keys as {@link RelayOptions}.
 * A relative `database` path is taken from the file's folder, not the working directory (a
 * `postgres://` URL is kept as it is).
 *
 * @throws {RelayConfigError} when the file cannot be read, is not JSON, or has an invalid field;
 * the message names the file and the field path (such as `sources[0].writeKey`).
 */
export async function loadRelayConfig(path: string): Promise<RelayOptions> {
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
    throw new RelayConfigError(path, `is not valid JSON: ${(error as Error).message}`, { cause: error })
  }
  let options: RelayOptions
  try {
    options = resolveRelayOptions(parsed)
  } catch (error) {
    if (error instanceof RelayConfigError)
      throw new RelayConfigError(error.field, `${error.message.slice(error.field.length + 2)} (in ${path})`, {
        cause: error,
      })
    throw error
  }
  const { database } = options
  if (database !== undefined && database !== ':memory:' && !isPostgresUrl(database) && !isAbsolute(database)) {
    options.database = resolve(dirname(path), database)
  }
  return options
}
