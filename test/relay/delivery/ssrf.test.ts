import { afterEach, describe, expect, it } from 'vitest'
import { request } from 'undici'
import { classifyAddress, type Relay } from '../../../src/relay/index'
import { guardedAgent } from '../../../src/relay/delivery/ssrf'
import { post, type Receiver, startReceiver, startRelay, track, waitForDelivery } from '../helpers'

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.254', 'carrier-grade NAT'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:a9fe:a9fe', 'link-local'],
    // NAT64: the gateway forwards to the IPv4 address in the last 32 bits.
    ['64:ff9b::127.0.0.1', 'loopback'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::a00:1', 'private'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['64:ff9b::', 'unspecified'],
    ['64:ff9b:1::192.168.0.1', 'private'],
    ['64:ff9b:1:ab::a9fe:a9fe', 'link-local'],
    ['64:ff9b:1::', 'unspecified'],
    // Local-use NAT64: where the IPv4 address sits is not knowable, so a public reading is refused too.
    ['64:ff9b:1::1.1.1.1', 'reserved'],
    ['64:ff9b:1:0:c0:a801:100::', 'reserved'], // 192.168.1.1 in the /64 layout; its last 32 bits read 1.0.0.0
    // SIIT (::ffff:0:0:0/96, RFC 6145): judged as the IPv4 address in the last 32 bits.
    ['::ffff:0:127.0.0.1', 'loopback'],
    ['::ffff:0:a00:1', 'private'],
    ['0:0:0:0:ffff:0:a9fe:a9fe', 'link-local'],
    // 6to4 (2002::/16): the IPv4 address of the relay sits in bits 16–48.
    ['2002:7f00:1::', 'loopback'],
    ['2002:a00:1:1::1', 'private'],
    ['2002:c0a8:101::8.8.8.8', 'private'],
    ['2002:a9fe:a9fe::', 'link-local'],
    // Teredo (2001::/32) reaches a host behind a NAT the address does not tell: refused whole.
    ['2001::1', 'reserved'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'reserved'],
    // The discard-only prefix (RFC 6666).
    ['100::', 'reserved'],
    ['100::1:2:3:4', 'reserved'],
    ['[::1]', 'loopback'],
    ['not-an-ip', 'reserved'],
  ])('%s is %s', (address, kind) => {
    expect(classifyAddress(address)).toBe(kind)
  })

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::8.8.8.8',
    '64:ff9b::808:808',
    '::ffff:0:8.8.8.8',
    '2002:808:808::1',
    '2001:4860:4860::8888',
    '100:0:0:1::1',
  ])('%s is public', (address) => {
    expect(classifyAddress(address)).toBeUndefined()
  })
})

describe('the guarded agent', () => {
  it('refuses a host name that resolves to a private address, checking every address', async () => {
    const agent = guardedAgent({
      allowPrivateNetworks: false,
      resolve: async () => [
        { address: '93.184.216.34', family: 4 },
        { address: '10.0.0.7', family: 4 },
      ],
    })
    try {
      await expect(request('http://hooks.example.test/a', { dispatcher: agent })).rejects.toThrow(
        /refused to connect to hooks\.example\.test \(10\.0\.0\.7\): a private address; set allowPrivateNetworks/,
      )
    } finally {
      await agent.close()
    }
  })
})

describe('webhooks to private networks', () => {
  let receiver: Receiver
  let relay: Relay | undefined
  afterEach(async () => {
    await receiver.close()
    await relay?.close()
  })

  it('refuses a loopback receiver without allowPrivateNetworks, dead-lettering with the reason', async () => {
    receiver = await startReceiver()
    for (const url of [receiver.url, receiver.url.replace('127.0.0.1', 'localhost')]) {
      relay = await startRelay(url, { allowPrivateNetworks: false })
      await post(`${relay.url}/v1/batch`, { batch: [track({ messageId: 'ssrf' })] })
      // Not retried for hours: the configuration, not the receiver, has to change.
      const delivery = await waitForDelivery(relay.url, 'failed', 'ssrf')
      expect(delivery.attempts).toHaveLength(1)
      expect(delivery.attempts[0].error).toMatch(/refused to connect to .*a loopback address; set allowPrivateNetworks/)
      expect(delivery.lastError).toMatch(/loopback/)
      await relay.close()
      relay = undefined
    }
    expect(receiver.received).toEqual([])
  })

  it('reaches the same receiver with allowPrivateNetworks', async () => {
    receiver = await startReceiver()
    relay = await startRelay(receiver.url, { allowPrivateNetworks: true })
    await post(`${relay.url}/v1/batch`, { batch: [track({ messageId: 'allowed' })] })
    await waitForDelivery(relay.url, 'delivered', 'allowed')
    expect(receiver.received.map((r) => r.body['messageId'])).toEqual(['allowed'])
  })
})
