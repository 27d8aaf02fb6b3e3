type Listener = (...args: never[]) => unknown

/**
 * The part of Node's `EventEmitter` the client is used through (`on`, `once`, `off`, `emit`,
 * `listenerCount` and their aliases), for the builds that load no Node module. Listeners run in
 * the order added; one added by `once` is removed before it runs.
 */
export class Emitter<Events extends Record<keyof Events, unknown[]>> {
  readonly #listeners = new Map<keyof Events, { listener: Listener; once: boolean }[]>()

  on<K extends keyof Events>(event: K, listener: (...args: Events[K]) => void): this {
    return this.#add(event, listener, false)
  }

  addListener<K extends keyof Events>(event: K, listener: (...args: Events[K]) => void): this {
    return this.#add(event, listener, false)
  }

  once<K extends keyof Events>(event: K, listener: (...args: Events[K]) => void): this {
    return this.#add(event, listener, true)
  }

  off<K extends keyof Events>(event: K, listener: (...args: Events[K]) => void): this {
    const list = this.#listeners.get(event)
    const index = list?.findIndex((entry) => entry.listener === listener) ?? -1
    if (index >= 0) list!.splice(index, 1)
    return this
  }

  removeListener<K extends keyof Events>(event: K, listener: (...args: Events[K]) => void): this {
    return this.off(event, listener)
  }

  removeAllListeners(event?: keyof Events): this {
    if (event === undefined) this.#listeners.clear()
    else this.#listeners.delete(event)
    return this
  }

  listenerCount(event: keyof Events): number {
    return this.#listeners.get(event)?.length ?? 0
  }

  emit<K extends keyof Events>(event: K, ...args: Events[K]): boolean {
    const list = this.#listeners.get(event)
    if (list === undefined || list.length === 0) return false
    for (const entry of [...list]) {
      if (entry.once) this.off(event, entry.listener as (...args: Events[K]) => void)
      ;(entry.listener as (...args: Events[K]) => void)(...args)
    }
    return true
  }

  #add<K extends keyof Events>(event: K, listener: (...args: Events[K]) => void, once: boolean): this {
    const list = this.#listeners.get(event) ?? []
    list.push({ listener: listener as Listener, once })
    this.#listeners.set(event, list)
    return this
  }
}
