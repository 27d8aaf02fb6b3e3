// The relay's public API (tracklet/relay), exported by name: nothing reaches users by accident.
export { createRelay, type Relay } from './relay'
export type { BreakerOptions, RelayOptions, RelaySource, SourceDestinations, SourceSchema } from './config/options'
export { RelayError, RelayConfigError, type RelayConfigProblem } from './errors'
export { BlockedAddressError } from './delivery/ssrf'
export { classifyAddress, type AddressKind } from './net/address'
export { loadRelayConfig } from './config/load-config'
export type { AlertEvent, AlertsOptions } from './config/alerts-option'
export type { WebhookSettings } from '../webhooks/index'
