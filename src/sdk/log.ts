// The client's log, from the platform: `debug` on Node, `log.web.ts` in the fetch build.
export { log } from './platform/log'
