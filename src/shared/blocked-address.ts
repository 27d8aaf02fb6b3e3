/**
 * The `code` of a connection the relay's SSRF guard refused (a webhook URL resolving to a private,
 * loopback or link-local address). Retrying will not change it: it is a configuration matter.
 */
export const BLOCKED_ADDRESS_CODE = 'ERR_BLOCKED_ADDRESS'
