import type { IncomingHttpHeaders } from 'node:http'

/** Options of the example receiver. */
export interface ReceiverOptions {
  /** @default 0 (any free port) */
  port?: number
  /** @default '127.0.0.1' */
  host?: string
  /** The destination's sharedSecret. Without one, deliveries are accepted unsigned. */
  secret?: string | undefined
  /** Called with each verified, parsed message. */
  onMessage?: (message: Record<string, unknown>, headers: IncomingHttpHeaders) => void
}

/** A running receiver. */
export interface Receiver {
  /** Where to send webhooks, such as `http://127.0.0.1:8080/`. */
  url: string
  close(): Promise<void>
}

/** Starts a node:http receiver that answers 204 to signed deliveries and 401 to the others. */
export function startReceiver(options?: ReceiverOptions): Promise<Receiver>
