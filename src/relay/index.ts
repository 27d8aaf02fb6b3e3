// The relay's public API (tracklet/relay), exported by name: nothing reaches users by accident.
export { createRelay, type Relay } from './relay'
export type { BreakerOptions, RelayOptions, RelaySource, SourceDestinations, SourceSchema } from './options'
export { RelayError, RelayConfigError, type RelayConfigProblem } from './errors'
export { BlockedAddressError, classifyAddress, type AddressKind } from './delivery/ssrf'
export { loadRelayConfig } from './config/load-config'
export type { WebhookSettings } from '../webhooks/index'
