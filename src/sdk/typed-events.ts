import type { CommonFields, Identity, ObjectFields, TrackParams } from '../shared/message'

/**
 * An event map for `Analytics<Events>`: each planned track event's name, and the type of its
 * `properties`. `tracklet typegen` writes one from a source's tracking plan:
 *
 * ```ts
 * type Events = { 'Order Completed': { revenue: number; currency?: string } }
 * const analytics = new Analytics<Events>('WRITE_KEY')
 * analytics.track({ userId: '42', event: 'Order Completed', properties: { revenue: 9.99 } })
 * ```
 */
export type EventMap = object

/** The map of a client made without one: any event name, any properties (`track` as untyped). */
export type AnyEvents = Record<string, ObjectFields>

/**
 * What `track` takes on an `Analytics<Events>`: one of the map's names as `event`, with its
 * properties (required when the plan requires any of them). Without a map, `TrackParams`.
 */
export type TrackParamsFor<Events extends EventMap> = string extends keyof Events
  ? TrackParams
  : {
      [Name in keyof Events & string]: CommonFields & Identity & { event: Name } & PropertiesOf<Events[Name]>
    }[keyof Events & string]

// Properties may be left out only when the plan requires none of them.
type PropertiesOf<Properties> = object extends Properties
  ? { properties?: Properties | undefined }
  : { properties: Properties }
