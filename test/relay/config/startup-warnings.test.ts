import { describe, expect, it } from 'vitest'
import { configWarnings, privateNetworkWarnings } from '../../../src/relay/config/startup-warnings'
import { validateRelayOptions } from '../../../src/relay/config/validate'

const hook = (url: string) => ({ Webhooks: { webhooks: [{ url }] } })
const resolve = async (host: string) => [
  { address: host === 'hooks.internal' ? '10.1.2.3' : '93.184.216.34', family: 4 },
]

describe('start-up warnings', () => {
  it('name a source with no destination, and a missing or short admin token, never the token', () => {
    const none = validateRelayOptions({ sources: [{ name: 'web', writeKey: 'k' }] })
    expect(configWarnings(none)).toEqual([
      'sources[0] (web) has no destination: its messages are accepted and never delivered',
      'adminToken is not set: the admin API and the operator page are off',
    ])
    const short = validateRelayOptions({
      adminToken: 'short-tok',
      sources: [{ name: 'web', writeKey: 'k', destinations: hook('https://a.example/') }],
    })
    expect(configWarnings(short)).toEqual(['adminToken is shorter than 16 characters: it can be guessed'])
    const fine = validateRelayOptions({
      adminToken: 'a-long-enough-admin-token',
      sources: [{ name: 'web', writeKey: 'k', destinations: hook('https://a.example/') }],
    })
    expect(configWarnings(fine)).toEqual([])
  })

  it('name a webhook URL on a private network while allowPrivateNetworks is false', async () => {
    const options = {
      sources: [
        { name: 'a', writeKey: 'ka', destinations: hook('http://127.0.0.1:3000/hook?token=t-secret') },
        {
          name: 'b',
          writeKey: 'kb',
          destinations: {
            Webhooks: { webhooks: [{ url: 'https://public.example/' }, { url: 'https://hooks.internal/x' }] },
          },
        },
        { name: 'c', writeKey: 'kc', destinations: hook('http://[::1]:8080/') },
      ],
    }
    const warnings = await privateNetworkWarnings(validateRelayOptions(options), resolve)
    expect(warnings).toEqual([
      'sources[0].destinations.Webhooks.webhooks[0].url: 127.0.0.1 is a loopback address and allowPrivateNetworks is false: every delivery to it will fail',
      'sources[1].destinations.Webhooks.webhooks[1].url: hooks.internal (10.1.2.3) is a private address and allowPrivateNetworks is false: every delivery to it will fail',
      'sources[2].destinations.Webhooks.webhooks[0].url: ::1 is a loopback address and allowPrivateNetworks is false: every delivery to it will fail',
    ])
    expect(
      await privateNetworkWarnings(validateRelayOptions({ ...options, allowPrivateNetworks: true }), resolve),
    ).toEqual([])
  })

  it('say nothing of a host that cannot be resolved now', async () => {
    const options = validateRelayOptions({
      sources: [{ name: 'a', writeKey: 'k', destinations: hook('https://nowhere.invalid/') }],
    })
    expect(await privateNetworkWarnings(options, () => Promise.reject(new Error('ENOTFOUND')))).toEqual([])
  })
})
