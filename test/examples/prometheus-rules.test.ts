import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Relay } from '../../src/relay/index'
import {
  PROMETHEUS_SKIP_REASON,
  type PrometheusServer,
  runPrometheusTests,
  startPrometheus,
} from '../support/prometheus-server'
import { post, type Receiver, startReceiver, startRelay, track, waitFor } from '../relay/helpers'
import { RULES_PATH, readAlertRules, readDashboardQueries, withGrafanaVariables } from './monitoring-files'

// The shipped rules and dashboard in a real Prometheus (Debian's package) scraping a real relay:
// every rule evaluates without error, every dashboard query runs, and alerts go pending or firing
// when their condition is made true.

const METRICS_TOKEN = 'prometheus-scrape-token'
const SLOW = 60_000

interface RuleState {
  name: string
  health: string
  lastError?: string
  state?: string
  lastEvaluation: string
}

describe.skipIf(!runPrometheusTests)(
  `the alert rules in a real Prometheus ${runPrometheusTests ? '' : PROMETHEUS_SKIP_REASON}`,
  () => {
    let receiver: Receiver
    let relay: Relay
    let prometheus: PrometheusServer

    beforeAll(async () => {
      receiver = await startReceiver()
      // A 404 dead-letters a delivery at once.
      receiver.respond((_req, res) => res.writeHead(404).end('no such hook'))
      relay = await startRelay(receiver.url, { metricsToken: METRICS_TOKEN })
      prometheus = await startPrometheus({
        jobs: [{ job: 'tracklet', target: new URL(relay.url).host, bearerToken: METRICS_TOKEN }],
        ruleFiles: [RULES_PATH],
      })
    }, SLOW)
    afterAll(async () => {
      await prometheus?.stop()
      await relay?.close()
      await receiver?.close()
    })

    async function rules(): Promise<RuleState[]> {
      const data = await prometheus.api<{ groups: { rules: RuleState[] }[] }>('rules')
      return data.groups.flatMap((group) => group.rules)
    }

    async function alertState(name: string): Promise<string | undefined> {
      return (await rules()).find((rule) => rule.name === name)?.state
    }

    it(
      'scrapes the relay and evaluates every rule without error',
      async () => {
        await waitFor(
          async () => {
            const data = await prometheus.api<{ activeTargets: { health: string }[] }>('targets')
            return data.activeTargets[0]?.health === 'up' ? true : undefined
          },
          'the relay to be scraped',
          30_000,
        )
        const evaluated = await waitFor(
          async () => {
            const all = await rules()
            return all.length === 6 && all.every((rule) => rule.lastEvaluation > '2000') ? all : undefined
          },
          'every rule to be evaluated',
          30_000,
        )
        expect(evaluated.map((rule) => rule.name)).toEqual(readAlertRules().map((rule) => rule.alert))
        for (const rule of evaluated)
          expect({ rule: rule.name, health: rule.health, error: rule.lastError ?? '' }).toEqual({
            rule: rule.name,
            health: 'ok',
            error: '',
          })
        // A healthy relay: nothing fires.
        expect(evaluated.filter((rule) => rule.state !== 'inactive').map((rule) => rule.name)).toEqual([])
      },
      SLOW,
    )

    it('runs every dashboard query', async () => {
      for (const query of readDashboardQueries()) {
        const expr = withGrafanaVariables(query.expr)
        await expect(
          prometheus.api(`query?query=${encodeURIComponent(expr)}`),
          `${query.title}: ${expr}`,
        ).resolves.toBeDefined()
      }
      const series = await prometheus.api<unknown[]>(`query?query=${encodeURIComponent('tracklet_outbox_deliveries')}`)
      expect(series).toHaveProperty('result')
    })

    it(
      'fires TrackletDeadLettersRising once a delivery is dead-lettered',
      async () => {
        // The counter's 0 is scraped first (the relay declares it from its start), so increase() sees the 1.
        expect(await alertState('TrackletDeadLettersRising')).toBe('inactive')
        expect((await post(`${relay.url}/v1/track`, track({ event: 'Gone' }))).status).toBe(200)
        await waitFor(
          async () => ((await alertState('TrackletDeadLettersRising')) === 'firing' ? true : undefined),
          'TrackletDeadLettersRising to fire',
          30_000,
        )
      },
      SLOW,
    )

    it(
      'turns TrackletRelayDown pending once the relay stops answering',
      async () => {
        await relay.close()
        await waitFor(
          async () => ((await alertState('TrackletRelayDown')) === 'pending' ? true : undefined),
          'TrackletRelayDown to be pending',
          30_000,
        )
      },
      SLOW,
    )
  },
)
