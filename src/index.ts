// The SDK's public API, exported by name: nothing reaches users by accident.
export { Analytics } from './sdk/analytics'
export { DEFAULT_OPTIONS, type AnalyticsOptions, type AnalyticsSettings } from './sdk/options'
export type { AnalyticsEvents, AnalyticsStats, CloseOptions, FlushOptions, MessageCallback } from './sdk/types'
export type { AnyEvents, EventMap, TrackParamsFor } from './sdk/typed-events'
export type { RequestEvent, ResponseEvent } from './sdk/diagnostics'
export type { ApiError } from './sdk/api-error'
export {
  AnalyticsError,
  ClosedError,
  DeliveryError,
  FilteredError,
  InvalidMessageError,
  MessageTooLargeError,
  QueueFullError,
  type AnalyticsErrorCode,
} from './sdk/errors'
export { MAX_BATCH_BYTES, MAX_MESSAGE_BYTES } from './shared/limits'
export type {
  AliasParams,
  CommonFields,
  GroupParams,
  IdentifyParams,
  Identity,
  Integrations,
  JsonObject,
  Message,
  MessageType,
  ObjectFields,
  PageParams,
  ScreenParams,
  TrackParams,
} from './shared/message'
