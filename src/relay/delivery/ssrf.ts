import { isIP } from 'node:net'
import { Agent, buildConnector } from 'undici'
import { BLOCKED_ADDRESS_CODE } from '../../shared/blocked-address'
import { RelayError } from '../errors'
import { type AddressKind, classifyAddress, type Resolve, resolveAll } from '../net/address'

/** The `code` of a {@link BlockedAddressError}. */
export { BLOCKED_ADDRESS_CODE }

/** A webhook's host resolved to an address the relay refuses to reach. */
export class BlockedAddressError extends RelayError {
  constructor(host: string, address: string, kind: AddressKind) {
    super(
      BLOCKED_ADDRESS_CODE,
      `refused to connect to ${host === address ? address : `${host} (${address})`}: a ${kind} address; set allowPrivateNetworks to reach private networks`,
    )
    this.name = 'BlockedAddressError'
  }
}

/**
 * An undici `Agent` that checks, at connect time, the addresses a webhook's host resolves to and
 * refuses loopback, private, link-local, unique-local, CGNAT, unspecified and multicast ones. It
 * then connects to the very address it checked (keeping the host name for TLS), so a DNS answer
 * that changes between the check and the connect cannot slip through. With `allowPrivateNetworks`
 * it is a plain agent.
 */
export function guardedAgent(options: { allowPrivateNetworks: boolean; resolve?: Resolve }): Agent {
  if (options.allowPrivateNetworks) return new Agent()
  const resolve = options.resolve ?? resolveAll
  const connect = buildConnector({})
  return new Agent({
    connect: (connectOptions, callback) => {
      const host = connectOptions.hostname.replace(/^\[(.*)\]$/, '$1')
      const checked = isIP(host) !== 0 ? Promise.resolve([{ address: host, family: isIP(host) }]) : resolve(host)
      checked
        .then((addresses) => {
          const first = addresses[0]
          if (first === undefined) throw new Error(`${host} resolved to no address`)
          for (const { address } of addresses) {
            const kind = classifyAddress(address)
            if (kind !== undefined) throw new BlockedAddressError(host, address, kind)
          }
          connect(
            {
              ...connectOptions,
              hostname: first.address,
              servername: connectOptions.servername ?? (isIP(host) === 0 ? host : ''),
            },
            callback,
          )
        })
        .catch((error: Error) => callback(error, null))
    },
  })
}
