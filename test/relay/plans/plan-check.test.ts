import { describe, expect, it } from 'vitest'
import { planCompilations } from '../../../src/relay/config/plan-compiler'
import { SourceRegistry } from '../../../src/relay/sources/source-registry'
import { validateRelayOptions } from '../../../src/relay/config/validate'
import { GroupCommit } from '../../../src/relay/ingest/group-commit'
import { ingest } from '../../../src/relay/ingest/ingest'
import { planCheck } from '../../../src/relay/features/plans/plan-check'
import type { CheckFindings } from '../../../src/relay/ingest/ingest-check'
import { openSqliteStoreWithDb } from '../fixtures/store'

const revenueAs = (type: string) => ({
  events: { 'Order Completed': { properties: { type: 'object', properties: { revenue: { type } } } } },
})

function registryWith(plan: unknown): SourceRegistry {
  const options = validateRelayOptions({
    sources: [{ name: 'web', writeKey: 'k', destinations: {}, schema: { plan, violations: 'block' } }],
  })
  return new SourceRegistry(options.sources)
}

const order = (n: number, revenue: unknown) => ({
  type: 'track',
  userId: 'u',
  event: 'Order Completed',
  messageId: `m-${n}`,
  properties: { revenue },
})

describe('the plan check at ingest', () => {
  it('compiles a plan once however many messages, and a changed plan (a reload, an API write) on its next message', async () => {
    const { store, db } = await openSqliteStoreWithDb()
    try {
      const check = planCheck()
      const commits = new GroupCommit(store)
      const registry = registryWith(revenueAs('number'))
      const before = planCompilations()
      const source = () => registry.routed()[0]!
      const many = Array.from({ length: 500 }, (_, n) => order(n, n % 2 === 0 ? 1 : 'one'))
      const first = await ingest(commits, source(), many, {}, check)
      expect(first).toMatchObject({ accepted: 500, filtered: 250 })
      expect(planCompilations()).toBe(before)
      // The registry is given new sources (validated: the new plan compiled there, once).
      registry.replace(
        validateRelayOptions({
          sources: [{ name: 'web', writeKey: 'k', schema: { plan: revenueAs('string'), violations: 'block' } }],
        }).sources,
      )
      expect(planCompilations()).toBe(before + 1)
      const after = await ingest(commits, source(), [order(1000, 1), order(1001, 'one')], {}, check)
      expect(after).toMatchObject({ accepted: 2, filtered: 1 })
      expect(after.violations?.map((v) => v.messageId)).toEqual(['m-1000'])
      expect(planCompilations()).toBe(before + 1)
      expect((await store.violations.find({ limit: 1000 })).violations).toHaveLength(251)
    } finally {
      db.close()
    }
  })

  it('costs a source without a plan nothing: nothing is checked or recorded', async () => {
    const { store, db } = await openSqliteStoreWithDb()
    try {
      const check = planCheck()
      const outcome = await ingest(
        new GroupCommit(store),
        { name: 'web', destinations: [] },
        [order(1, 'x')],
        {},
        check,
      )
      expect(outcome).toEqual({ accepted: 1, refused: [], filtered: 0 })
      expect((await store.violations.find({ limit: 10 })).violations).toEqual([])
    } finally {
      db.close()
    }
  })
})

describe('omit', () => {
  it('records a required property it takes out for its type as missing too', () => {
    const plan = {
      events: {
        'Order Completed': {
          properties: {
            type: 'object',
            properties: { revenue: { type: 'number' }, coupon: { type: 'string' } },
            required: ['revenue'],
          },
        },
      },
    }
    const options = validateRelayOptions({
      sources: [{ name: 'web', writeKey: 'k', destinations: {}, schema: { plan, violations: 'omit' } }],
    })
    const source = new SourceRegistry(options.sources).routed()[0]!
    const verdict = planCheck()(
      { ...order(1, 'ten'), properties: { revenue: 'ten', coupon: 5 } },
      source,
    ) as CheckFindings
    expect(verdict.message?.['properties']).toEqual({})
    expect(verdict.violations?.map((v) => [v.kind, v.path])).toEqual([
      ['type', '/properties/revenue'],
      ['type', '/properties/coupon'],
      ['required', '/properties/revenue'],
    ])
  })
})
