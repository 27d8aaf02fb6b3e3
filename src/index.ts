// The SDK's public API, exported by name: nothing reaches users by accident.
export type {
  AliasParams,
  CommonFields,
  GroupParams,
  IdentifyParams,
  Integrations,
  JsonObject,
  Message,
  MessageType,
  PageParams,
  ScreenParams,
  TrackParams,
} from './shared/message'
