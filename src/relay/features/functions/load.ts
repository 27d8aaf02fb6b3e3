import { readFile } from 'node:fs/promises'
import type { ResolvedRelayOptions } from '../../config/options'
import { WEBHOOKS_DESTINATION } from '../../config/sources'
import type { DestinationFunction } from '../../config/function-settings'
import { RelayConfigError } from '../../errors'
import { log } from '../../log'
import type { FunctionResult } from './result'
import { FunctionCompileError, FunctionSandbox, type FunctionSpec } from './sandbox'
import type { FunctionCaller } from './step'

/** Told of every call of a function (metrics). Must not throw. */
export type FunctionObserver = (source: string, result: FunctionResult, destination: string) => void

/** Source name → destination name → its function; with `close()` to end every sandbox. */
export interface LoadedFunctions {
  readonly bySource: ReadonlyMap<string, ReadonlyMap<string, FunctionCaller>>
  close(): Promise<void>
}

/**
 * Reads and compiles every destination's function of `options`, each in a sandbox of its own. A
 * file that cannot be read or code that does not compile is a config error naming its path
 * (`sources[0].destinations.Webhooks.function.file: …`), and nothing is left running.
 *
 * @throws {RelayConfigError} listing every function that failed.
 */
export async function loadFunctions(
  options: ResolvedRelayOptions,
  observe?: FunctionObserver,
): Promise<LoadedFunctions> {
  const sandboxes: FunctionSandbox[] = []
  const problems: { field: string; message: string }[] = []
  const bySource = new Map<string, Map<string, FunctionCaller>>()
  await Promise.all(
    options.sources.flatMap((source, index) =>
      Object.entries(source.destinations ?? {}).map(async ([destination, given]) => {
        const settings = given as DestinationFunction | undefined
        const fn = settings?.function
        if (settings === undefined || fn === undefined) return
        const path = `sources[${index}].destinations.${destination}`
        const field = `${path}.function.${'file' in fn ? 'file' : 'code'}`
        let code: string
        try {
          code = 'file' in fn ? await readFile(fn.file, 'utf8') : fn.code
        } catch (error) {
          problems.push({ field, message: `cannot read the function's file: ${(error as Error).message}` })
          return
        }
        try {
          const sandbox = await FunctionSandbox.start({
            code,
            filename: 'file' in fn ? fn.file : field,
            settings: settings.functionSettings ?? {},
            timeoutMs: options.functionTimeout,
            memoryMb: options.functionMemory,
          })
          sandboxes.push(sandbox)
          const caller: FunctionCaller =
            observe === undefined ? sandbox : observed(sandbox, source.name, destination, observe)
          const named = bySource.get(source.name) ?? new Map<string, FunctionCaller>()
          bySource.set(source.name, named.set(destination, caller))
        } catch (error) {
          if (!(error instanceof FunctionCompileError)) throw error
          problems.push({ field, message: error.message })
        }
      }),
    ),
  )
  const close = async () => {
    await Promise.all(sandboxes.map((sandbox) => sandbox.close()))
  }
  const [first] = problems
  if (first !== undefined) {
    await close()
    throw new RelayConfigError(first.field, first.message, { problems })
  }
  return { bySource, close }
}

/**
 * Starts one source's function (its Webhooks destination's), compiled in a sandbox of its own.
 * @throws {FunctionCompileError} when the code does not compile; a sandbox that fails to start throws too.
 */
export async function loadSourceFunction(
  source: string,
  spec: FunctionSpec,
  observe?: FunctionObserver,
): Promise<LoadedFunctions> {
  const sandbox = await FunctionSandbox.start(spec)
  const caller: FunctionCaller =
    observe === undefined ? sandbox : observed(sandbox, source, WEBHOOKS_DESTINATION, observe)
  return { bySource: new Map([[source, new Map([[WEBHOOKS_DESTINATION, caller]])]]), close: () => sandbox.close() }
}

function observed(
  sandbox: FunctionSandbox,
  source: string,
  destination: string,
  observe: FunctionObserver,
): FunctionCaller {
  return {
    call: async (message) => {
      const result = await sandbox.call(message)
      try {
        observe(source, result, destination)
      } catch (error) {
        log.error(`an observer of function calls threw: ${(error as Error).message}`, { event: 'internal-error' })
      }
      return result
    },
  }
}

/**
 * Reads and compiles every destination's function of `options`, then ends their sandboxes: what
 * `tracklet relay --check` asks, so a function that would stop the relay's start fails the check.
 *
 * @throws {RelayConfigError} naming the path of each function that cannot be read or does not compile.
 */
export async function compileFunctions(options: ResolvedRelayOptions): Promise<void> {
  await (await loadFunctions(options)).close()
}
