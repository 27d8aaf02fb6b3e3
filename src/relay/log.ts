import createDebug from 'debug'

/**
 * The relay's log, off by default: `DEBUG=tracklet:relay` shows requests refused, deliveries
 * attempted and dead-lettered. Write keys, shared secrets and the admin token are never logged:
 * sources are named by their `name`, and request headers are never printed.
 */
export const log = createDebug('tracklet:relay')
