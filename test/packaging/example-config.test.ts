import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { loadRelayConfig } from '../../src/relay/index'

// The relay config a new user starts from: shipped in the package, shown whole in the README's
// quick start and the Segment guide. One file, the docs showing it as it is, and a config the
// relay takes.
const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const EXAMPLE = 'examples/relay.local.json'
const read = (path: string) => readFileSync(`${ROOT}${path}`, 'utf8')

describe(`the example relay config (${EXAMPLE})`, () => {
  it('is valid, delivers to a local receiver, and says so with allowPrivateNetworks', async () => {
    const env = { TRACKLET_ADMIN_TOKEN: 'a-token', WEB_WRITE_KEY: 'wk', WEBHOOK_SECRET: 's'.repeat(32) }
    const options = await loadRelayConfig(`${ROOT}${EXAMPLE}`, env)
    expect(options.allowPrivateNetworks).toBe(true)
    expect(options.sources[0]!.destinations?.Webhooks?.webhooks[0]?.url).toMatch(/^http:\/\/localhost[:/]/)
  })

  it.each(['README.md', 'docs/coming-from-segment.md'])(
    'is shown whole in %s, and allowPrivateNetworks explained',
    (doc) => {
      const text = read(doc)
      expect(text).toContain(`\`\`\`json\n${read(EXAMPLE)}\`\`\``)
      expect(text).toMatch(/`allowPrivateNetworks: true`[^.]*localhost/)
    },
  )

  it('is in the package', () => {
    const pkg = JSON.parse(read('package.json')) as { files: string[] }
    expect(pkg.files).toContain(EXAMPLE)
  })
})
