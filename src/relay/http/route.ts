import type { IncomingMessage, ServerResponse } from 'node:http'

/** Answers one request; `params` are the route pattern's groups. */
export type Handler = (req: IncomingMessage, res: ServerResponse, params: string[], url: URL) => Promise<void>

/** A method and path pattern, and its handler. */
export interface Route {
  method: string
  pattern: RegExp
  handler: Handler
}
