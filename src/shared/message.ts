/**
 * The message types shared by the SDK, the Webhooks destination and the relay. The relay and the
 * destination depend on these types only, never on the SDK's internals.
 */

/** The call types a client sends. */
export type MessageType = 'identify' | 'track' | 'page' | 'screen' | 'group' | 'alias'

/** Every call type, in the order the documentation lists them. */
export const MESSAGE_TYPES: readonly MessageType[] = Object.freeze([
  'identify',
  'track',
  'page',
  'screen',
  'group',
  'alias',
])

/** A JSON object with free keys: traits, properties, context. */
export type JsonObject = Record<string, unknown>

/**
 * Per-call destination flags, keyed by destination name (case sensitive). A value is `true` or
 * `false`, or an object of destination options (which counts as enabled). `All: false` disables
 * every destination that is not named `true`.
 */
export type Integrations = Record<string, boolean | JsonObject>

/** Fields every call accepts. Each call needs `userId` or `anonymousId`. */
export interface CommonFields {
  /** The user's id in your database. */
  userId?: string
  /** An id for a user who is not known yet. */
  anonymousId?: string
  /** A unique id for the message; a UUID is generated when omitted. Kept across retries. */
  messageId?: string
  /**
   * When the call happened: a `Date` or an ISO 8601 string with a time zone (historical
   * import). Defaults to the time of the call.
   */
  timestamp?: Date | string
  /** Extra information that is not an attribute of the user (ip, locale, device, …). */
  context?: JsonObject
  /** Destination flags for this call, merged over the client's defaults. */
  integrations?: Integrations
}

/** `identify`: ties a user to their traits. */
export interface IdentifyParams extends CommonFields {
  traits?: JsonObject
}

/** `track`: records an action the user performed. */
export interface TrackParams extends CommonFields {
  /** The name of the action, such as `Order Completed`. Required. */
  event: string
  properties?: JsonObject
}

/** `page`: records a page view. */
export interface PageParams extends CommonFields {
  name?: string
  category?: string
  /** Recognised keys: `url`, `path`, `title`, `referrer`; free keys allowed. */
  properties?: JsonObject
}

/** `screen`: records a screen view in a mobile app. */
export interface ScreenParams extends CommonFields {
  name?: string
  category?: string
  properties?: JsonObject
}

/** `group`: ties a user to a group (a company, an organisation, an account). */
export interface GroupParams extends CommonFields {
  /** The group's id. Required. */
  groupId: string
  traits?: JsonObject
}

/** `alias`: ties a previous identity to a user id. */
export interface AliasParams extends Omit<CommonFields, 'userId' | 'anonymousId'> {
  /** The id to alias from (often an anonymous id). Required. */
  previousId: string
  /** The user's id. Required. */
  userId: string
  anonymousId?: string
}

/** The parameters each call type takes. */
export interface ParamsByType {
  identify: IdentifyParams
  track: TrackParams
  page: PageParams
  screen: ScreenParams
  group: GroupParams
  alias: AliasParams
}

/** `context.library`, set by the SDK on every message. */
export interface LibraryInfo {
  name: string
  version: string
}

/**
 * A message as it travels on the wire (in a batch, in the outbox): normalised, with its `type`,
 * `messageId` and an ISO 8601 `timestamp`. Other fields are those of its call type.
 */
export interface Message {
  type: MessageType
  messageId: string
  /** ISO 8601 with a time zone. */
  timestamp: string
  userId?: string
  anonymousId?: string
  previousId?: string
  event?: string
  name?: string
  category?: string
  groupId?: string
  traits?: JsonObject
  properties?: JsonObject
  context?: JsonObject
  integrations?: Integrations
  /** Other fields are kept as given. */
  [field: string]: unknown
}

/** A platform event: a user's data is to be deleted downstream. */
export interface DeleteMessage {
  type: 'delete'
  userId: string
  /** ISO 8601 UTC with milliseconds. */
  timestamp: string
  /** Used by the relay for de-duplication; not part of the delivered body. */
  messageId?: string
}

/** Anything the Webhooks destination can deliver. */
export type DeliverableMessage = Message | DeleteMessage
