import createDebug from 'debug'

/**
 * The client's log: `DEBUG=analytics` shows what is queued, flushed, retried and dropped.
 * Nothing here ever formats the write key or the Authorization header. This is Node's; the fetch
 * build has `log.web.ts`, since debug reads process.env.DEBUG as it loads.
 */
export const log = createDebug('analytics')
