import type { RegisteredSource } from '../../sources/source-registry'
import { RelayConfigError } from '../../errors'
import { log } from '../../log'
import { type ApiSourceFunction, apiFunctionFilename } from './api-function'
import type { ReloadableFunctions } from './reloadable'

/** The functions the API sources carry now (a provisioned source's are the config file's, loaded apart). */
export function apiFunctionsOf(sources: readonly RegisteredSource[]): ApiSourceFunction[] {
  const functions: ApiSourceFunction[] = []
  for (const { provisioned, settings } of sources) {
    const webhooks = settings.destinations?.Webhooks
    const fn = webhooks?.function
    if (provisioned || fn === undefined || !('code' in fn)) continue
    functions.push({ source: settings.name, code: fn.code, settings: webhooks?.functionSettings ?? {} })
  }
  return functions
}

/**
 * Keeps the API sources' functions in use as the sources say (docs/functions.md, "Through the
 * admin API"): compiled at start, then put in use at each change of the sources. A relay that
 * cannot compile a function changed elsewhere keeps the one it had and logs it at `error` (the
 * relay that took the `PUT` compiled it, so this one's limits or sandbox differ).
 */
export class ApiFunctionSync {
  readonly #functions: ReloadableFunctions
  readonly #sources: () => readonly RegisteredSource[]

  constructor(functions: ReloadableFunctions, sources: () => readonly RegisteredSource[]) {
    this.#functions = functions
    this.#sources = sources
  }

  /**
   * Compiles the API sources' functions and puts them in use.
   * @throws {RelayConfigError} naming each source whose function does not compile: the relay does
   * not start without a function its source asks for.
   */
  async start(): Promise<void> {
    const problems = await this.#functions.applyApi(apiFunctionsOf(this.#sources()))
    if (problems.length === 0) return
    const listed = problems.map(({ source, message }) => ({
      field: apiFunctionFilename(source),
      message: `does not compile: ${message} (fix it with PUT /v1/sources/${encodeURIComponent(source)})`,
    }))
    throw new RelayConfigError(listed[0]!.field, listed[0]!.message, { problems: listed })
  }

  /**
   * The sources changed: each function changed is in use from now on (an attempt waits while it
   * compiles). Resolves once they compiled; never rejects (a failure is logged).
   */
  async changed(): Promise<void> {
    try {
      for (const { source, message } of await this.#functions.applyApi(apiFunctionsOf(this.#sources()))) {
        log.error(
          `the function of source ${JSON.stringify(source)} set through the admin API does not compile on this relay (the function it had stays in use; with none, its deliveries are retried): ${message}`,
          { event: 'config-failed', source },
        )
      }
    } catch (error) {
      log.error(`cannot apply the API sources' functions: ${(error as Error).message}`, { event: 'internal-error' })
    }
  }
}
