import type * as PromClient from 'prom-client'
import { RELAY_PEERS, requirePeer } from '../peers'

/**
 * prom-client, an optional peer dependency (`peers.ts`): loaded by the first relay of the process,
 * so `npm i tracklet` for the SDK alone does not install it.
 *
 * @throws {RelayError} `ERR_RELAY_PACKAGE_MISSING` when it is not installed.
 */
export function promClient(): typeof PromClient {
  return requirePeer(RELAY_PEERS.metrics, 'prom-client')
}
