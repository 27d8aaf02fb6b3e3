import { RelayError } from '../errors'

/**
 * Why ingest refused a request whole, as data: the routes turn each into an HTTP answer
 * (`ingest/routes.ts`), so ingest itself knows nothing of HTTP.
 * - `invalid-body`: the body is not the shape the path takes (a batch without a `batch` array);
 * - `invalid-message`: a single call's message contradicts its path (`type` is another type);
 * - `store-unavailable`: the commit failed; nothing was stored and the client may send it again;
 * - `unstorable`: the commit failed because of this request's own data; sending it again fails again.
 */
export type IngestErrorKind = 'invalid-body' | 'invalid-message' | 'store-unavailable' | 'unstorable'

/** A request ingest refused whole (`ERR_INGEST_REFUSED`); `kind` says why, `message` says it to the client. */
export class IngestError extends RelayError {
  readonly kind: IngestErrorKind

  constructor(kind: IngestErrorKind, message: string, options?: { cause?: unknown }) {
    super('ERR_INGEST_REFUSED', message, options)
    this.name = 'IngestError'
    this.kind = kind
  }
}
