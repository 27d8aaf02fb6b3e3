import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { CONSENT_REASON } from '../../../src/relay/features/privacy/consent'
import { SUPPRESSED_REASON } from '../../../src/relay/features/privacy/privacy-check'
import { SUPPRESSIONS_POLL_MS, SUPPRESSIONS_TOPIC } from '../../../src/relay/features/privacy/suppression-follower'
import { MAX_SUPPRESSION_IDS } from '../../../src/relay/features/privacy/suppression-request'

// docs/privacy.md's table of facts says what the code says.
describe('docs/privacy.md, "The facts in one place"', () => {
  const doc = readFileSync(new URL('../../../docs/privacy.md', import.meta.url), 'utf8')
  const section = doc.slice(doc.indexOf('## The facts in one place'))
  const rows = new Map(
    [...section.matchAll(/^\| ([^|]+?) +\| ([^|]+?) +\|$/gm)].map((match) => [match[1]!, match[2]!] as const),
  )

  it('gives each fact its value in the code', () => {
    expect(rows.get('user ids per `POST /v1/suppressions`')).toBe(`1 to ${MAX_SUPPRESSION_IDS.toLocaleString('en')}`)
    expect(rows.get('how often each relay reads the version')).toBe(`every ${SUPPRESSIONS_POLL_MS / 1000} s`)
    expect(rows.get('the notification topic')).toBe(`\`${SUPPRESSIONS_TOPIC}\``)
    expect(rows.get("a suppressed message's `filtered` reason")).toBe(`\`${SUPPRESSED_REASON}\``)
    expect(rows.get("a withheld message's `filtered` reason")).toBe(`\`${CONSENT_REASON}\``)
  })
})
