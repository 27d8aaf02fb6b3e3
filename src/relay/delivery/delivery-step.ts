import type { DeliverableMessage } from '../../shared/message'

/**
 * What a step decided about one delivery: send `message` (the stored one or another), or end the
 * attempt with no request: `filtered` (terminal, with `reason`), `retry` (the usual schedule) or
 * `failed` (dead-lettered: retrying would not change it). `logs` are the lines a function printed
 * during the call (`console`), kept with the attempt.
 */
export type StepVerdict = { logs?: readonly string[] } & (
  | { kind: 'send'; message: DeliverableMessage }
  | { kind: 'filtered'; reason: string }
  | { kind: 'retry'; error: string }
  | { kind: 'failed'; error: string }
)

/** The step of one route (source → destination): may be async; one that throws counts as `failed`. */
export type RouteStep = (message: DeliverableMessage) => StepVerdict | Promise<StepVerdict>

/**
 * The one step each due delivery passes through before its destination formats and sends it: the
 * destinations' functions (docs/functions.md) and any other (docs/maintainers.md, "Seams"). The
 * worker runs it before the delivery takes a URL's slot, so a slow step holds no receiver's slot.
 * A route without a step (`of` answers `undefined`) sends the stored message as it is, at no cost.
 */
export interface DeliveryStep {
  of(source: string, destination: string): RouteStep | undefined
}

/** `first` then `second`: the second sees what the first chose to send, and neither runs past an end. */
export function chainSteps(
  first: DeliveryStep | undefined,
  second: DeliveryStep | undefined,
): DeliveryStep | undefined {
  if (first === undefined) return second
  if (second === undefined) return first
  return {
    of(source, destination) {
      const a = first.of(source, destination)
      const b = second.of(source, destination)
      if (a === undefined || b === undefined) return a ?? b
      return async (message) => {
        const verdict = await runStep(a, message)
        return verdict.kind === 'send' ? runStep(b, verdict.message) : verdict
      }
    },
  }
}

/** Runs `step` on `message`; never rejects (a step that throws answers `failed` with its message). */
export async function runStep(step: RouteStep, message: DeliverableMessage): Promise<StepVerdict> {
  try {
    return await step(message)
  } catch (error) {
    return {
      kind: 'failed',
      error: `the delivery step failed: ${error instanceof Error ? error.message : String(error)}`,
    }
  }
}
