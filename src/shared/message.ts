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

/**
 * Free-form fields as a call takes them (`traits`, `properties`, `context`): any object, an
 * interface or a class's shape included. At run time they must be plain objects.
 */
// biome-ignore lint/suspicious/noExplicitAny: only an index signature of `any` admits interfaces, which declare none.
export type ObjectFields = Record<string, any>

/**
 * Fields every call accepts. Optional fields also take `undefined` (same as leaving them out),
 * so code written under `exactOptionalPropertyTypes` can pass a value that may be missing.
 */
export interface CommonFields {
  /** The user's id in your database. */
  userId?: string | undefined
  /** An id for a user who is not known yet. */
  anonymousId?: string | undefined
  /** A unique id for the message; a UUID is generated when omitted. Kept across retries. */
  messageId?: string | undefined
  /**
   * When the call happened: a `Date` or an ISO 8601 string with a time zone (historical
   * import). Defaults to the time of the call.
   */
  timestamp?: Date | string | undefined
  /** Extra information that is not an attribute of the user (ip, locale, device, …). */
  context?: ObjectFields | undefined
  /** Destination flags for this call, merged over the client's defaults. */
  integrations?: Integrations | undefined
}

/**
 * Who a call is about: `userId`, `anonymousId`, or both. A call with neither does not compile
 * (and, from JavaScript, fails with `ERR_INVALID_MESSAGE`).
 */
export type Identity =
  | { userId: string; anonymousId?: string | undefined }
  | { userId?: string | undefined; anonymousId: string }

/** `identify`: ties a user to their traits. */
export type IdentifyParams = CommonFields &
  Identity & {
    traits?: ObjectFields | undefined
  }

/** `track`: records an action the user performed. */
export type TrackParams = CommonFields &
  Identity & {
    /** The name of the action, such as `Order Completed`. Required. */
    event: string
    properties?: ObjectFields | undefined
  }

/** `page`: records a page view. */
export type PageParams = CommonFields &
  Identity & {
    name?: string | undefined
    category?: string | undefined
    /** Recognised keys: `url`, `path`, `title`, `referrer`; free keys allowed. */
    properties?: ObjectFields | undefined
  }

/** `screen`: records a screen view in a mobile app. */
export type ScreenParams = CommonFields &
  Identity & {
    name?: string | undefined
    category?: string | undefined
    properties?: ObjectFields | undefined
  }

/** `group`: ties a user to a group (a company, an organisation, an account). */
export type GroupParams = CommonFields &
  Identity & {
    /** The group's id. Required. */
    groupId: string
    traits?: ObjectFields | undefined
  }

/** `alias`: ties a previous identity to a user id. */
export type AliasParams = Omit<CommonFields, 'userId' | 'anonymousId'> & {
  /** The id to alias from (often an anonymous id). Required. */
  previousId: string
  /** The user's id. Required. */
  userId: string
  anonymousId?: string | undefined
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
