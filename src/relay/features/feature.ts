import type { DeliveryStep } from '../delivery/delivery-step'
import type { RelayEventListener } from '../events/channel'
import type { IngestTap } from '../events/tap'
import type { Route } from '../http/route'
import type { IngestCheck } from '../ingest/ingest-check'
import type { PreparedReload, ReloadPart } from '../sources/reload'

// What a feature adds to the relay (docs/architecture.md, "Features"): one folder,
// `src/relay/features/<name>/`, whose entry `index.ts` returns one `Feature`. `relay.ts` lists the
// features in order and composes what they add; a feature's store part may stay in the store's
// dialect folders, everything else lives in its folder. Every member but `name` is optional: a
// feature says only what it adds.

/**
 * One feature of the relay: its name and what it adds to the areas (fastify's `fp(fn, { name,
 * dependencies })`, graphile-worker's plugins).
 */
export interface Feature {
  /** A short unique name: `functions`, `plans`, `replay`, `live`, `sources`, `privacy`. */
  readonly name: string
  /** The features it needs listed before it, by name: checked when the relay is composed. */
  readonly dependencies?: readonly string[]
  /** Its HTTP routes (admin API, page actions), served with the areas'. */
  readonly routes?: readonly Route[]
  /**
   * A check each valid message passes at ingest, before it is stored (refuse it, change it, block
   * it, record what it broke). The relay chains the features' checks in their order.
   */
  readonly ingestCheck?: IngestCheck
  /**
   * A step each due delivery passes before its destination sends it (filter, change, retry). The
   * relay chains the features' steps in their order.
   */
  readonly deliveryStep?: DeliveryStep
  /** What it reads of the relay's events (attempts, circuits, violations…), as they happen. */
  readonly readers?: readonly RelayEventListener[]
  /**
   * What it hears of each message of an ingest request as ingest judges it (the live view). The
   * relay tells every feature's tap, in the features' order.
   */
  readonly ingestTap?: IngestTap
  /** Its section of the operator page. */
  readonly page?: PageSection
  /** Its part of a config reload (a changed file applied to the running relay). */
  readonly reload?: ReloadPart
  /** Starts its work (timers, polls), once every area and feature is built. */
  start?(): void | Promise<void>
  /** Releases what it holds; called once, on close, in reverse order of the features. */
  stop?(): void | Promise<void>
}

/** A feature's section of the operator page: its link in the page's bar and the pages behind it. */
export interface PageSection {
  /** The link's text in the page's bar: `Replays`. */
  readonly title: string
  /** Where the link goes: `/ui/replays`. */
  readonly path: string
  /** The page's routes (`GET /ui/replays`, its forms' `POST`s). */
  readonly routes: readonly Route[]
}

/** A feature's part of a reload: the reload's own parts (`sources/reload.ts`). */
export type FeatureReload = ReloadPart
export type { PreparedReload }

/** Checks that each feature's dependencies come before it and that names are unique. */
export function checkFeatureOrder(features: readonly Feature[]): void {
  const seen = new Set<string>()
  for (const feature of features) {
    if (seen.has(feature.name)) throw new Error(`the feature ${feature.name} is listed twice`)
    for (const needed of feature.dependencies ?? []) {
      if (seen.has(needed)) continue
      throw new Error(`the feature ${feature.name} needs ${needed} listed before it`)
    }
    seen.add(feature.name)
  }
}
