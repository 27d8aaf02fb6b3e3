import { constants, type Stats } from 'node:fs'
import { type FileHandle, open } from 'node:fs/promises'
import { dirname, isAbsolute, resolve } from 'node:path'
import { RelayConfigError } from '../errors'
import type { RelayOptions } from './options'
import { isPostgresUrl } from './database-value'
import { expandEnvReferences } from './env-references'
import { whereJsonBreaks } from './json-error'
import { ConfigProblems } from '../kit/rules'
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
  const text = await readConfigText(path)
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

/** The largest config file the relay reads: a file past it is refused before it is read. */
export const CONFIG_FILE_MAX_BYTES = 8 * 1024 * 1024
/** How long reading the config file may take before it is refused (a stalled disk, a mount). */
export const CONFIG_READ_TIMEOUT_MS = 10_000

// Only a regular file is read, and at most CONFIG_FILE_MAX_BYTES of it, within
// CONFIG_READ_TIMEOUT_MS: a FIFO nobody writes would hold every later reload (the SIGHUP reloads
// run one after the other), and `/dev/zero` would fill memory. The file is opened without
// blocking, so a FIFO is seen as one and refused rather than waited on.
async function readConfigText(path: string): Promise<string> {
  const cannotRead = (error: unknown) =>
    new RelayConfigError(path, `cannot read the config file: ${(error as Error).message}`, { cause: error })
  let handle: FileHandle
  try {
    handle = await open(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0))
  } catch (error) {
    throw cannotRead(error)
  }
  let timer: NodeJS.Timeout | undefined
  try {
    const stats = await handle.stat()
    if (!stats.isFile())
      throw new RelayConfigError(path, `cannot read the config file: it is ${kindOf(stats)}, not a regular file`)
    if (stats.size > CONFIG_FILE_MAX_BYTES) throw tooLarge(path)
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new RelayConfigError(path, `cannot read the config file: no answer within ${CONFIG_READ_TIMEOUT_MS} ms`),
          ),
        CONFIG_READ_TIMEOUT_MS,
      )
      timer.unref()
    })
    return await Promise.race([readBounded(handle, path), timeout])
  } catch (error) {
    throw error instanceof RelayConfigError ? error : cannotRead(error)
  } finally {
    clearTimeout(timer)
    await handle.close().catch(() => {})
  }
}

// Reads to the end, refusing a file that grew past the bound while it was read.
async function readBounded(handle: FileHandle, path: string): Promise<string> {
  const chunks: Buffer[] = []
  let length = 0
  for (;;) {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(64 * 1024), 0, 64 * 1024, null)
    if (bytesRead === 0) break
    chunks.push(buffer.subarray(0, bytesRead))
    length += bytesRead
    if (length > CONFIG_FILE_MAX_BYTES) throw tooLarge(path)
  }
  return Buffer.concat(chunks, length).toString('utf8')
}

function tooLarge(path: string): RelayConfigError {
  return new RelayConfigError(path, `cannot read the config file: it is larger than ${CONFIG_FILE_MAX_BYTES} bytes`)
}

function kindOf(stats: Stats): string {
  if (stats.isFIFO()) return 'a FIFO'
  if (stats.isCharacterDevice()) return 'a character device'
  if (stats.isBlockDevice()) return 'a block device'
  if (stats.isSocket()) return 'a socket'
  if (stats.isDirectory()) return 'a folder'
  return 'not a file'
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
