import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRelay, type Relay } from '../../src/relay/index'
import { ADMIN_TOKEN, type Receiver, startReceiver, startRelay } from '../relay/helpers'
import { familiesOf, RULES_PATH, readAlertRules, readDashboardQueries } from './monitoring-files'

// The shipped alert rules and dashboard name only metrics a relay serves, and a relay declares
// every family from its start, whatever its config (a rule or panel over a family that appears
// only later would read "no data" as "all is well").

const PROMTOOL = process.env['PROMTOOL_PATH'] ?? '/usr/bin/promtool'
const runPromtool = existsSync(PROMTOOL) || process.env['CI'] === 'true'

let receiver: Receiver
let full: Relay
let bare: Relay

beforeAll(async () => {
  receiver = await startReceiver()
  full = await startRelay(receiver.url, { metricsToken: 'metrics-token' })
  // No destination, no metrics token, nothing sent: the least a relay can be configured with.
  bare = await createRelay({
    port: 0,
    database: ':memory:',
    adminToken: ADMIN_TOKEN,
    sources: [{ name: 'bare', writeKey: 'wk-bare' }],
  })
})
afterAll(async () => {
  await full?.close()
  await bare?.close()
  await receiver?.close()
})

/** The `tracklet_` families a relay's /metrics declares (its `# TYPE` lines). */
async function declaredFamilies(relay: Relay): Promise<Set<string>> {
  const response = await request(`${relay.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
  expect(response.statusCode).toBe(200)
  const text = await response.body.text()
  const families = new Set<string>()
  for (const line of text.split('\n')) {
    const type = /^# TYPE (tracklet_\w+) /.exec(line)
    if (type === null) continue
    families.add(type[1]!)
    expect(text, `${type[1]} has a HELP line`).toContain(`# HELP ${type[1]} `)
  }
  return families
}

describe('the shipped alert rules and dashboard', () => {
  it('ship the six alerts the docs describe', () => {
    expect(readAlertRules().map((rule) => rule.alert)).toEqual([
      'TrackletEndpointFailing',
      'TrackletOutboxGrowing',
      'TrackletOldestPendingTooOld',
      'TrackletStoreUnwritable',
      'TrackletDeadLettersRising',
      'TrackletRelayDown',
    ])
  })

  it('use only metric families a running relay serves', async () => {
    const served = await declaredFamilies(full)
    const used = [...readAlertRules(), ...readDashboardQueries()].flatMap((query) =>
      familiesOf(query.expr).map((family) => ({ family, in: 'alert' in query ? query.alert : query.title })),
    )
    expect(used.length).toBeGreaterThan(10)
    expect(used.filter((use) => !served.has(use.family))).toEqual([])
  })

  it('cover ingest, delivery, latency, the outbox, circuits and refusals', () => {
    const used = new Set(readDashboardQueries().flatMap((query) => familiesOf(query.expr)))
    for (const family of [
      'tracklet_messages_ingested_total',
      'tracklet_delivery_attempts_total',
      'tracklet_delivery_attempt_duration_seconds',
      'tracklet_outbox_deliveries',
      'tracklet_outbox_oldest_age_seconds',
      'tracklet_circuit_state',
      'tracklet_messages_refused_total',
      'tracklet_ingest_requests_refused_total',
    ]) {
      expect(used, family).toContain(family)
    }
  })

  it.skipIf(!runPromtool)('pass promtool check rules', () => {
    const run = spawnSync(PROMTOOL, ['check', 'rules', RULES_PATH], { encoding: 'utf8' })
    if (run.error) throw new Error(`could not run ${PROMTOOL} (apt-get install prometheus): ${run.error.message}`)
    expect(`${run.stdout}${run.stderr}`).toContain('SUCCESS: 6 rules found')
    expect(run.status).toBe(0)
  })
})

describe('/metrics declares every tracklet_ family from the start', () => {
  it('the same families, with HELP and TYPE, whatever the config and before any traffic', async () => {
    const fullFamilies = await declaredFamilies(full)
    expect(fullFamilies).toContain('tracklet_clock_offset_seconds')
    expect(fullFamilies).toContain('tracklet_circuit_state')
    expect(fullFamilies.size).toBeGreaterThanOrEqual(15)
    expect([...(await declaredFamilies(bare))].sort()).toEqual([...fullFamilies].sort())
  })

  it('gives the clock offset no sample on SQLite, where the store has no clock of its own', async () => {
    const response = await request(`${bare.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
    const text = await response.body.text()
    expect(text).toContain('# TYPE tracklet_clock_offset_seconds gauge')
    expect(text).not.toMatch(/^tracklet_clock_offset_seconds /m)
  })
})
