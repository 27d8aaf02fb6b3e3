import type { RoutedSource } from '../config/sources'

/**
 * An optional check each message passes once it is valid (and has its `messageId` and times),
 * before it goes to the outbox (tracking plans, later: docs/maintainers.md, "Seams"). It returns
 * why the message is refused (one sentence for the client; refused as `invalid`, on its own, like
 * any invalid message), or `undefined` to accept it. Without a check, nothing is asked, at no cost.
 */
export type IngestCheck = (message: Readonly<Record<string, unknown>>, source: RoutedSource) => string | undefined
