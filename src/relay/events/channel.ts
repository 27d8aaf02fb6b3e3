import { log } from '../log'
import type { RelayEvent } from './kinds'

/** Hears every {@link RelayEvent} as it is published. Runs on the publisher's turn: keep it short. */
export type RelayEventListener = (event: RelayEvent) => void

/**
 * The relay's one in-process channel of what happens: ingest and delivery publish to it, metrics
 * (and later a live view) listen. A publisher asks {@link listened} first and builds no event
 * when nobody listens, so the channel costs nothing then. See docs/maintainers.md, "Seams".
 */
export class RelayEvents {
  #listeners: readonly RelayEventListener[] = []

  /** Whether anyone listens: publishers build no event otherwise. */
  get listened(): boolean {
    return this.#listeners.length > 0
  }

  /** Adds `listener`; the function returned removes it. */
  subscribe(listener: RelayEventListener): () => void {
    this.#listeners = [...this.#listeners, listener]
    return () => {
      this.#listeners = this.#listeners.filter((l) => l !== listener)
    }
  }

  /** Tells every listener of `event`. A listener that throws is logged; the others still hear it. */
  publish(event: RelayEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event)
      } catch (error) {
        log.error(`a listener of ${event.type} events failed: ${(error as Error).stack ?? error}`, {
          event: 'internal-error',
        })
      }
    }
  }
}
