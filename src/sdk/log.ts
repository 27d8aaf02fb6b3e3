import createDebug from 'debug'

/**
 * The client's log: `DEBUG=analytics` shows what is queued, flushed, retried and dropped.
 * Nothing here ever formats the write key or the Authorization header.
 */
export const log = createDebug('analytics')
