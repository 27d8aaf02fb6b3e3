import { WEBHOOKS_DESTINATION } from '../../config/sources'
import { Generation } from './generation'
import { type FunctionObserver, loadSourceFunction } from './load'
import type { FunctionResult } from './result'
import { FunctionCompileError } from './sandbox'
import type { FunctionCaller } from './step'

/** The function an API source's Webhooks destination carries (docs/functions.md, "Through the admin API"). */
export interface ApiSourceFunction {
  source: string
  code: string
  settings: Record<string, unknown>
}

/** An API source's function that did not compile (or whose sandbox did not start) on this relay. */
export interface ApiFunctionProblem {
  source: string
  message: string
}

/** Where an API source's function comes from, in its errors and stack traces. */
export function apiFunctionFilename(source: string): string {
  return `source ${JSON.stringify(source)}: destinations.Webhooks.function.code`
}

/** What compiling an API source's function needs besides the function. */
export interface ApiFunctionDeps {
  limits: { timeoutMs: number; memoryMb: number }
  observe?: FunctionObserver | undefined
}

/**
 * One API source's function as this relay runs it, from the moment the registry has it: an
 * attempt that comes while it compiles waits for it (never going out without the function its
 * source now asks for). If it does not compile here, its calls go to the function it replaced
 * (`previous`), or, with none, are answered as retries naming the problem.
 */
export class ApiFunction {
  /** Its code and settings, to tell whether a change touched it. */
  readonly key: string
  /** Resolves once it compiled (`undefined`) or failed (the problem). Never rejects. */
  readonly ready: Promise<ApiFunctionProblem | undefined>
  readonly caller: FunctionCaller
  #use: FunctionCaller | undefined
  #generation: Generation | undefined
  // The function this one replaced, still called while this one is compiling or did not compile.
  #fallback: ApiFunction | undefined
  #failed = false
  #retired = false

  constructor(fn: ApiSourceFunction, deps: ApiFunctionDeps, previous: ApiFunction | undefined) {
    this.key = keyOf(fn)
    this.caller = { call: (message) => this.#call(message) }
    this.ready = this.#compile(fn, deps, previous)
  }

  /** An entry that only answers retries naming `problem` (the sources' first function did not compile). */
  static failed(source: string, problem: string): FunctionCaller {
    const message = `the function of source ${JSON.stringify(source)} does not compile on this relay: ${problem}`
    const result: FunctionResult = { kind: 'retry', message, logs: [], logsTruncated: false, ms: 0 }
    return { call: () => Promise.resolve(result) }
  }

  /** Whether `fn` is the function this runs (same code, same settings; one that failed tries again at each change). */
  runs(fn: ApiSourceFunction): boolean {
    return !this.#failed && keyOf(fn) === this.key
  }

  /** The route's callers: Webhooks → this. */
  routes(): ReadonlyMap<string, FunctionCaller> {
    return new Map([[WEBHOOKS_DESTINATION, this.caller]])
  }

  /** Out of use: closed once its calls in flight settle (if it is still compiling, once it compiled). */
  retire(): void {
    this.#retired = true
    this.#generation?.retire()
    this.#fallback?.retire()
  }

  /** Ends it now (the relay is closing): once compiled, its sandbox and the one it replaced are closed. */
  async close(): Promise<void> {
    this.#retired = true
    await this.ready
    await Promise.all([this.#generation?.loaded.close(), this.#fallback?.close()])
  }

  async #compile(
    fn: ApiSourceFunction,
    deps: ApiFunctionDeps,
    previous: ApiFunction | undefined,
  ): Promise<ApiFunctionProblem | undefined> {
    const spec = { code: fn.code, settings: fn.settings, filename: apiFunctionFilename(fn.source), ...deps.limits }
    this.#fallback = previous
    try {
      const generation = new Generation(await loadSourceFunction(fn.source, spec, deps.observe))
      this.#generation = generation
      this.#use = generation.bySource.get(fn.source)!.get(WEBHOOKS_DESTINATION)
      this.#fallback = undefined
      if (this.#retired) generation.retire()
      previous?.retire()
      return undefined
    } catch (error) {
      const message = error instanceof FunctionCompileError ? error.reason : (error as Error).message
      this.#failed = true
      this.#use = previous?.caller ?? ApiFunction.failed(fn.source, message)
      return { source: fn.source, message }
    }
  }

  async #call(message: unknown): Promise<FunctionResult> {
    if (this.#use === undefined) await this.ready
    return this.#use!.call(message)
  }
}

function keyOf(fn: ApiSourceFunction): string {
  return JSON.stringify([fn.code, fn.settings])
}
