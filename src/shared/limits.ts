/**
 * Size limits shared by the SDK and the relay. "KB" is 1,000 bytes, as in the Go library's own
 * constants, which also keeps every message acceptable to a server that counts 1,024.
 */

/** The largest message, as UTF-8 bytes of its JSON, that is accepted. */
export const MAX_MESSAGE_BYTES = 32_000

/** The largest batch request body, in bytes. A flush that would exceed it is split. */
export const MAX_BATCH_BYTES = 500_000
