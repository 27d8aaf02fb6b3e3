import type { Circuit } from '../store/circuits'

/**
 * What hears of the circuit changes a relay makes itself, not those it learns of from another
 * relay: alerts go once per change, from the relay that made it. Must not throw.
 */
export interface CircuitChanges {
  opened(url: string, error: string | undefined): void
  closed(url: string): void
}

/** Whether the write that added `reported` failures took the store's run over `threshold`: it opened the circuit. */
export function openedBy(circuit: Circuit, reported: number, threshold: number): boolean {
  return circuit.state === 'open' && circuit.failures >= threshold && circuit.failures - reported < threshold
}
