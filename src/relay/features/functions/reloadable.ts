import type { ResolvedRelayOptions } from '../../config/options'
import type { PreparedFunctions } from '../../sources/reload'
import { ApiFunction, type ApiFunctionProblem, type ApiSourceFunction } from './api-function'
import { Generation } from './generation'
import { type FunctionObserver, loadFunctions } from './load'
import type { FunctionCaller } from './step'

/**
 * The destinations' functions of a relay whose sources change while it runs: the config file's
 * (a reload swaps them whole, {@link prepare}) and the admin API's (one per source, compiled only
 * when its code or settings changed, {@link applyApi}). {@link bySource} is one map the delivery
 * worker holds, whose entries are swapped in place, so each attempt calls the function current
 * when it starts. The functions replaced are closed once their calls in flight have settled (a call
 * that started finishes with the code it started with).
 */
export class ReloadableFunctions {
  /** Source name → destination name → its function, now. */
  readonly bySource = new Map<string, ReadonlyMap<string, FunctionCaller>>()
  readonly #observe: FunctionObserver | undefined
  readonly #limits: { timeoutMs: number; memoryMb: number }
  #file: Generation | undefined
  readonly #api = new Map<string, ApiFunction>()

  private constructor(options: ResolvedRelayOptions, observe: FunctionObserver | undefined) {
    this.#observe = observe
    // Not reloadable (a restart applies them): every function of this relay runs under these.
    this.#limits = { timeoutMs: options.functionTimeout, memoryMb: options.functionMemory }
  }

  /**
   * Reads and compiles the functions of `options` (see {@link loadFunctions}).
   * @throws {RelayConfigError} listing every function that failed.
   */
  static async load(options: ResolvedRelayOptions, observe?: FunctionObserver): Promise<ReloadableFunctions> {
    const functions = new ReloadableFunctions(options, observe)
    const prepared = await functions.prepare(options)
    prepared.commit()
    return functions
  }

  /**
   * Reads and compiles the config file's functions of `options` again (each `function.file` is
   * read anew), without putting them in use until `commit()`.
   * @throws {RelayConfigError} listing every function that failed; those in use stay.
   */
  async prepare(options: ResolvedRelayOptions): Promise<PreparedFunctions> {
    const generation = new Generation(await loadFunctions(options, this.#observe))
    return {
      commit: () => {
        this.#file?.retire()
        this.#file = generation
        this.#rebuild()
      },
      discard: () => generation.loaded.close(),
    }
  }

  /**
   * Puts the API sources' functions as `functions` lists them in use at once: one whose code or
   * settings changed starts compiling, and an attempt of its source meanwhile waits for it; one no
   * longer listed (its source deleted, or its function removed) is closed once its calls settle.
   * Resolves, once each has compiled, to the problems of those that did not (see {@link ApiFunction}:
   * they keep calling the function they replaced).
   */
  applyApi(functions: readonly ApiSourceFunction[]): Promise<ApiFunctionProblem[]> {
    const wanted = new Set(functions.map((fn) => fn.source))
    for (const [source, entry] of this.#api) {
      if (wanted.has(source)) continue
      entry.retire()
      this.#api.delete(source)
    }
    const compiling: Promise<ApiFunctionProblem | undefined>[] = []
    for (const fn of functions) {
      const current = this.#api.get(fn.source)
      if (current?.runs(fn)) continue
      const entry = new ApiFunction(fn, { limits: this.#limits, observe: this.#observe }, current)
      this.#api.set(fn.source, entry)
      compiling.push(entry.ready)
    }
    this.#rebuild()
    return Promise.all(compiling).then((results) => results.filter((problem) => problem !== undefined))
  }

  /** Closes every function in use. */
  async close(): Promise<void> {
    this.bySource.clear()
    const api = [...this.#api.values()]
    this.#api.clear()
    await Promise.all([this.#file?.loaded.close(), ...api.map((entry) => entry.close())])
  }

  #rebuild(): void {
    this.bySource.clear()
    for (const [source, callers] of this.#file?.bySource ?? []) this.bySource.set(source, callers)
    for (const [source, entry] of this.#api) this.bySource.set(source, entry.routes())
  }
}
