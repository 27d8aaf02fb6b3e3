import type { ResolvedRelayOptions } from '../../config/options'
import type { PreparedFunctions } from '../../config/reload'
import { type FunctionObserver, type LoadedFunctions, loadFunctions } from './load'
import type { FunctionCaller } from './step'

/**
 * The destinations' functions of a relay whose config may be reloaded: {@link bySource} is one map
 * the delivery worker holds, whose entries a reload swaps in place, so each attempt calls the
 * function current when it starts. The functions replaced are closed once their calls in flight
 * have settled (a call that started finishes with the code it started with).
 */
export class ReloadableFunctions {
  /** Source name → destination name → its function, now. */
  readonly bySource = new Map<string, ReadonlyMap<string, FunctionCaller>>()
  readonly #observe: FunctionObserver | undefined
  #generation: Generation | undefined

  private constructor(observe: FunctionObserver | undefined) {
    this.#observe = observe
  }

  /**
   * Reads and compiles the functions of `options` (see {@link loadFunctions}).
   * @throws {RelayConfigError} listing every function that failed.
   */
  static async load(options: ResolvedRelayOptions, observe?: FunctionObserver): Promise<ReloadableFunctions> {
    const functions = new ReloadableFunctions(observe)
    const prepared = await functions.prepare(options)
    prepared.commit()
    return functions
  }

  /**
   * Reads and compiles the functions of `options` again (each `function.file` is read anew),
   * without putting them in use until `commit()`.
   * @throws {RelayConfigError} listing every function that failed; those in use stay.
   */
  async prepare(options: ResolvedRelayOptions): Promise<PreparedFunctions> {
    const generation = new Generation(await loadFunctions(options, this.#observe))
    return {
      commit: () => {
        this.#generation?.retire()
        this.#generation = generation
        this.bySource.clear()
        for (const [source, callers] of generation.bySource) this.bySource.set(source, callers)
      },
      discard: () => generation.loaded.close(),
    }
  }

  /** Closes every function in use. */
  async close(): Promise<void> {
    this.bySource.clear()
    await this.#generation?.loaded.close()
  }
}

// One load's functions, each call counted, so that they are closed only once none is running.
class Generation {
  readonly loaded: LoadedFunctions
  readonly bySource = new Map<string, ReadonlyMap<string, FunctionCaller>>()
  #inFlight = 0
  #retired = false

  constructor(loaded: LoadedFunctions) {
    this.loaded = loaded
    for (const [source, callers] of loaded.bySource) {
      const counted = new Map([...callers].map(([destination, caller]) => [destination, this.#counted(caller)]))
      this.bySource.set(source, counted)
    }
  }

  retire(): void {
    this.#retired = true
    if (this.#inFlight === 0) void this.loaded.close()
  }

  #counted(caller: FunctionCaller): FunctionCaller {
    return {
      call: async (message) => {
        this.#inFlight++
        try {
          return await caller.call(message)
        } finally {
          this.#inFlight--
          if (this.#retired && this.#inFlight === 0) void this.loaded.close()
        }
      },
    }
  }
}
