import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** The relay's HTTP server, as the relay's options set it. */
export interface ServerOptions {
  port: number
  host: string
  headersTimeout: number
  requestTimeout: number
  maxHeaderSize: number
}

/** A listening server, closed in two steps around the deliveries' grace. */
export interface ListeningServer {
  /** Its base URL, such as `http://127.0.0.1:8787`. */
  readonly url: string
  /** Takes no new connection; idle ones are closed, busy ones finish their request. */
  stopListening(): void
  /** Cuts every connection left and resolves once the server is closed. */
  cutConnections(): Promise<void>
}

/** Starts a `node:http` server for `listener` and resolves once it listens. */
export function listen(
  listener: (req: IncomingMessage, res: ServerResponse) => void,
  options: ServerOptions,
): Promise<ListeningServer> {
  const { headersTimeout, requestTimeout, maxHeaderSize } = options
  // Node checks the two timeouts only this often (30 s by default).
  const check = Math.max(50, Math.min(30_000, Math.floor(Math.min(headersTimeout, requestTimeout) / 4)))
  const server = createServer(
    { headersTimeout, requestTimeout, maxHeaderSize, connectionsCheckingInterval: check },
    listener,
  )
  const closed = new Promise<void>((resolve) => server.once('close', resolve))
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, options.host, () => {
      server.off('error', reject)
      const { address, port } = server.address() as AddressInfo
      resolve({
        url: `http://${address.includes(':') ? `[${address}]` : address}:${port}`,
        stopListening: () => {
          server.close()
          server.closeIdleConnections()
        },
        cutConnections: () => {
          server.closeAllConnections()
          return closed
        },
      })
    })
  })
}
