/** Published on `tracklet:request` as each batch request starts (retries included). */
export interface RequestEvent {
  /** Where the batch is posted. */
  url: string
  /** Messages in the batch. */
  messages: number
  /** The request body's bytes before any compression. */
  bytes: number
  /** 1 for the first request of the batch, then 2, 3, … for its retries. */
  attempt: number
}

/** Published on `tracklet:response` as each batch request ends. */
export interface ResponseEvent {
  url: string
  messages: number
  /** The answer's HTTP status; absent when no answer came. */
  status?: number
  /** Why no answer came (a network error, a timeout); absent when one did. */
  error?: Error
  /** How long the request took, in milliseconds. */
  ms: number
}

/**
 * Where the client tells observers about its requests: Node's `diagnostics_channel` in the Node
 * build (see `platform/diagnostics.ts`); nothing in the fetch builds, which load no Node module.
 */
export interface RequestDiagnostics {
  /** Whether anyone listens now: when not, no event is made at all. */
  readonly active: boolean
  request(event: RequestEvent): void
  response(event: ResponseEvent): void
}

/** The channels' names (Node's `diagnostics_channel`). */
export const DIAGNOSTICS_CHANNELS = Object.freeze({ request: 'tracklet:request', response: 'tracklet:response' })
