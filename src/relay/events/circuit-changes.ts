import type { Circuit } from '../store/circuits'

/**
 * What hears of the circuit changes a relay makes itself, not those it learns of from another
 * relay: alerts go once per change, from the relay that made it. Must not throw.
 */
export interface CircuitChanges {
  /** `status`: the HTTP status of the failure that opened it, when the receiver answered. */
  opened(url: string, error: string | undefined, status: number | undefined): void
  /** `status`: the HTTP status of the answer that closed it (a 4xx closes it too). */
  closed(url: string, status: number | undefined): void
}

/** Whether the write that added `reported` failures took the store's run over `threshold`: it opened the circuit. */
export function openedBy(circuit: Circuit, reported: number, threshold: number): boolean {
  return circuit.state === 'open' && circuit.failures >= threshold && circuit.failures - reported < threshold
}
