import { describe, expect, it } from 'vitest'
import { missingPeer, RELAY_PEERS, requirePeer, resolvePeer } from '../../src/relay/peers'

describe("the relay's optional peer dependencies", () => {
  const absent = { needs: 'a test feature', packages: ['tracklet-no-such-package', 'tracklet-nor-this'] }

  it('loads an installed one, and resolves where it is', () => {
    expect(requirePeer<{ Registry: unknown }>(RELAY_PEERS.metrics, 'prom-client').Registry).toBeTypeOf('function')
    expect(resolvePeer(RELAY_PEERS.functions, 'quickjs-emscripten-core')).toMatch(/quickjs-emscripten-core/)
  })

  it('names every package of the feature to install when one is missing', () => {
    for (const load of [requirePeer, resolvePeer]) {
      expect(() => load(absent, 'tracklet-no-such-package')).toThrow(
        expect.objectContaining({
          code: 'ERR_RELAY_PACKAGE_MISSING',
          message:
            'a test feature needs the tracklet-no-such-package and tracklet-nor-this packages, which are not ' +
            'installed: run `npm install tracklet-no-such-package tracklet-nor-this`',
        }),
      )
    }
    expect(missingPeer(RELAY_PEERS.metrics).message).toBe(
      'the relay (its /metrics) needs the prom-client package, which is not installed: run `npm install prom-client`',
    )
  })
})
