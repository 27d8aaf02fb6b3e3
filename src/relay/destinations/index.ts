import { archive } from './archive/index'
import type { DestinationModule } from './destination'
import { warehouse } from './warehouse/index'
import { webhooks } from './webhooks/index'

/**
 * Every destination the relay knows, one line each (docs/architecture.md, "Destinations"): a new
 * destination is its folder beside this file and one line in this list. Its name is its key in a
 * source's `destinations`; the config's checks, delivery and the console all read this list.
 */
export const DESTINATIONS: readonly DestinationModule[] = [webhooks, archive, warehouse]
