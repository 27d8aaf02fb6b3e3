import { lookup } from 'node:dns/promises'
import { BlockList, isIP } from 'node:net'

/** Why an address is not public. */
export type AddressKind =
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'unique-local'
  | 'carrier-grade NAT'
  | 'multicast'
  | 'reserved'

// Ranges a webhook must not reach, in the order they are tested (the first match names it).
const RANGES: readonly [AddressKind, 'ipv4' | 'ipv6', string, number][] = [
  ['unspecified', 'ipv4', '0.0.0.0', 8],
  ['loopback', 'ipv4', '127.0.0.0', 8],
  ['private', 'ipv4', '10.0.0.0', 8],
  ['private', 'ipv4', '172.16.0.0', 12],
  ['private', 'ipv4', '192.168.0.0', 16],
  ['link-local', 'ipv4', '169.254.0.0', 16],
  ['carrier-grade NAT', 'ipv4', '100.64.0.0', 10],
  ['reserved', 'ipv4', '192.0.0.0', 24],
  ['reserved', 'ipv4', '198.18.0.0', 15],
  ['multicast', 'ipv4', '224.0.0.0', 4],
  ['reserved', 'ipv4', '240.0.0.0', 4],
  ['unspecified', 'ipv6', '::', 128],
  ['loopback', 'ipv6', '::1', 128],
  ['link-local', 'ipv6', 'fe80::', 10],
  ['private', 'ipv6', 'fec0::', 10], // deprecated site-local
  ['unique-local', 'ipv6', 'fc00::', 7],
  ['multicast', 'ipv6', 'ff00::', 8],
  ['reserved', 'ipv6', '::', 96], // deprecated IPv4-compatible addresses
  // Local-use NAT64 (RFC 8215): where the IPv4 address sits depends on the prefix length the
  // network chose, which the address does not tell. A non-public IPv4 address in the last 32 bits
  // (the /96 layout) is named as such; any other address in the range is refused as well.
  ['reserved', 'ipv6', '64:ff9b:1::', 48],
  // Teredo (RFC 4380) tunnels to a host behind a NAT whose inside the address does not tell.
  ['reserved', 'ipv6', '2001::', 32],
  ['reserved', 'ipv6', '100::', 64], // discard-only (RFC 6666)
]

const LISTS: readonly [AddressKind, BlockList][] = RANGES.map(([kind, family, network, prefix]) => {
  const list = new BlockList()
  list.addSubnet(network, prefix, family)
  return [kind, list]
})

/**
 * Which kind of non-public address `address` is (an IPv4 or IPv6 literal), or `undefined` for a
 * public one. An IPv6 address that carries an IPv4 address in its last 32 bits is judged as that
 * IPv4 address: IPv4-mapped (`::ffff:127.0.0.1`), SIIT (`::ffff:0:127.0.0.1`) and NAT64
 * (`64:ff9b::7f00:1`, RFC 6052), since a translator forwards it to that very address; a 6to4
 * address (`2002::/16`) is judged as the IPv4 address in its bits 16–48, where the 6to4 relay
 * delivers it. The local-use NAT64 range `64:ff9b:1::/48` (RFC 8215) is refused whole: named by
 * its last 32 bits when they are a non-public IPv4 address, `reserved` otherwise. Teredo
 * (`2001::/32`) and the discard-only prefix (`100::/64`) are refused whole, as `reserved`.
 */
export function classifyAddress(address: string): AddressKind | undefined {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address
  const family = isIP(bare)
  if (family === 0) return 'reserved' // not an address at all: never connect to it
  if (family === 4) return kindOf(bare, 'ipv4')
  const embedded = embeddedIpv4(bare)
  return (embedded === undefined ? undefined : kindOf(embedded, 'ipv4')) ?? kindOf(bare, 'ipv6')
}

function kindOf(address: string, type: 'ipv4' | 'ipv6'): AddressKind | undefined {
  for (const [kind, list] of LISTS) if (list.check(address, type)) return kind
  return undefined
}

// IPv6 prefixes whose addresses carry an IPv4 address, with the index of the first of the two
// 16-bit groups (of eight) that hold it.
const IPV4_CARRIERS: readonly [BlockList, number][] = (
  [
    ['::ffff:0:0', 96, 6], // IPv4-mapped
    ['::ffff:0:0:0', 96, 6], // SIIT (RFC 6145)
    ['64:ff9b::', 96, 6], // NAT64, the well-known prefix (RFC 6052)
    ['64:ff9b:1::', 48, 6], // local-use NAT64, read as the /96 layout
    ['2002::', 16, 1], // 6to4 (RFC 3056): the relay's IPv4 address in bits 16–48
  ] as const
).map(([network, prefix, group]) => {
  const list = new BlockList()
  list.addSubnet(network, prefix, 'ipv6')
  return [list, group]
})

// `::ffff:a.b.c.d`, `64:ff9b::7f00:1`, `2002:7f00:1::` (any spelling of a carrier prefix) → `a.b.c.d`.
function embeddedIpv4(address: string): string | undefined {
  const carrier = IPV4_CARRIERS.find(([list]) => list.check(address, 'ipv6'))
  if (carrier === undefined) return undefined
  const groups = ipv6Groups(address)
  const high = groups[carrier[1]] ?? 0
  const low = groups[carrier[1] + 1] ?? 0
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.')
}

// The eight 16-bit groups of a valid IPv6 literal: `::` expanded, a dotted IPv4 tail read as two groups.
function ipv6Groups(address: string): number[] {
  let text = address.split('%', 1)[0]!
  const lastColon = text.lastIndexOf(':')
  const tail = text.slice(lastColon + 1)
  if (isIP(tail) === 4) {
    const [a = 0, b = 0, c = 0, d = 0] = tail.split('.').map(Number)
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head = '', rest] = text.split('::')
  const headGroups = head === '' ? [] : head.split(':')
  const restGroups = rest === undefined || rest === '' ? [] : rest.split(':')
  const groups =
    rest === undefined
      ? headGroups
      : [...headGroups, ...Array<string>(8 - headGroups.length - restGroups.length).fill('0'), ...restGroups]
  return groups.map((group) => Number.parseInt(group, 16))
}

/** How a host name is resolved to its addresses (injectable for tests). */
export type Resolve = (host: string) => Promise<{ address: string; family: number }[]>

export const resolveAll: Resolve = (host) => lookup(host, { all: true, verbatim: true })
