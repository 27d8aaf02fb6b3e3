import type { LoadedFunctions } from './load'
import type { FunctionCaller } from './step'

/**
 * One load's functions, each call counted, so that they are closed only once none is running: a
 * call that started when they were replaced finishes with the code it started with.
 */
export class Generation {
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

  /** No attempt starts a call of these any more: they are closed once the calls in flight settle. */
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
