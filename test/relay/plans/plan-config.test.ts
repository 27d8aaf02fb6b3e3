import { describe, expect, it } from 'vitest'
import {
  compiledPlan,
  PATTERN_INSTRUCTIONS_PER_SCHEMA,
  planCompilations,
} from '../../../src/relay/config/plan-compiler'
import { validateRelayOptions } from '../../../src/relay/config/validate'
import { RelayConfigError } from '../../../src/relay/index'

const source = { name: 'web', writeKey: 'wk-web' }

function problemsOf(schema: unknown): { field: string; message: string }[] {
  try {
    validateRelayOptions({ sources: [{ ...source, schema }] })
  } catch (error) {
    expect(error).toBeInstanceOf(RelayConfigError)
    return [...(error as RelayConfigError).problems]
  }
  throw new Error('expected the options to be refused')
}

describe('schema.plan in the config', () => {
  it('refuses a schema that does not compile, naming its path; every such schema at once', () => {
    const problems = problemsOf({
      plan: {
        events: {
          'Order Completed': { properties: { type: 'object', properties: { revenue: { type: 'nubmer' } } } },
          'Signed Up': { properties: { type: 'object', tpye: 'x' } },
        },
        identify: { traits: { required: 'email' } },
      },
    })
    expect(problems.map((p) => p.field)).toEqual([
      'sources[0].schema.plan.events["Order Completed"].properties',
      'sources[0].schema.plan.events["Signed Up"].properties',
      'sources[0].schema.plan.identify.traits',
    ])
    expect(problems[0]!.message).toMatch(/not a valid JSON Schema \(draft-07\)/)
    // A misspelt keyword would check nothing: strict schemas refuse it.
    expect(problems[1]!.message).toContain('tpye')
  })

  it('refuses a plan of the wrong shape, each problem at its path', () => {
    expect(problemsOf({ plan: { event: {} } }).map((p) => p.field)).toEqual([
      'sources[0].schema.plan.event',
      'sources[0].schema.plan.events',
    ])
    expect(problemsOf({ plan: { events: { A: { props: {} } } } }).map((p) => p.field)).toEqual([
      'sources[0].schema.plan.events["A"].props',
      'sources[0].schema.plan.events["A"].properties',
    ])
    expect(problemsOf({ plan: { events: { A: { properties: 'number' } } } })[0]!.field).toBe(
      'sources[0].schema.plan.events["A"].properties',
    )
    expect(problemsOf({ plan: { events: {} }, violations: 'drop' })[0]).toMatchObject({
      field: 'sources[0].schema.violations',
      message: expect.stringContaining('allow, omit, block'),
    })
  })

  it('refuses an action without a plan: it would change nothing', () => {
    expect(problemsOf({ unplanned: 'block' })).toEqual([
      { field: 'sources[0].schema.unplanned', message: expect.stringContaining('no plan') },
    ])
  })

  it('keeps a valid plan, with its actions defaulted to allow, as a copy compiled once', () => {
    const plan = {
      events: { 'Order Completed': { properties: { type: 'object', properties: { email: { format: 'email' } } } } },
    }
    const before = planCompilations()
    const resolved = validateRelayOptions({ sources: [{ ...source, schema: { plan } }] })
    const schema = resolved.sources[0]!.schema!
    expect(schema).toEqual({ blockedEvents: [], plan, unplanned: 'allow', violations: 'allow' })
    expect(schema.plan).not.toBe(plan)
    expect(planCompilations()).toBe(before + 1)
    // What ingest asks for is the plan compiled at validation.
    const compiled = compiledPlan(schema.plan!)
    expect(compiledPlan(schema.plan!)).toBe(compiled)
    expect(planCompilations()).toBe(before + 1)
    expect(compiled.events.get('Order Completed')!({ email: 'not an email' })).toBe(false)
  })

  it('runs patterns on a linear-time engine: what V8 would backtrack on is matched at once', () => {
    const plan = {
      events: {
        A: {
          properties: {
            type: 'object',
            properties: { p: { type: 'string', pattern: '^(a+)+$' } },
            patternProperties: { '^x(y+)+$': { type: 'number' } },
          },
        },
      },
    }
    const check = compiledPlan(
      validateRelayOptions({ sources: [{ ...source, schema: { plan } }] }).sources[0]!.schema!.plan!,
    ).events.get('A')!
    // With V8's RegExp each `a` doubles the time: 40 of them would take days.
    expect(check({ p: `${'a'.repeat(40)}!` })).toBe(false)
    expect(check({ p: 'aaaa' })).toBe(true)
    expect(check({ [`x${'y'.repeat(40)}!`]: 'text' })).toBe(true)
    expect(check({ xyy: 'text' })).toBe(false)
  })

  it('refuses, at its path, a pattern RE2 cannot run and patterns that would cost too much', () => {
    const problems = problemsOf({
      plan: {
        events: {
          Lookahead: { properties: { properties: { p: { type: 'string', pattern: '^(?=a)a$' } } } },
          Counted: { properties: { properties: { p: { type: 'string', pattern: '^[a-z]{1,1000}$' } } } },
          Fine: { properties: { properties: { p: { type: 'string', pattern: '^[a-z]+@[a-z.]+$' } } } },
        },
      },
    })
    expect(problems.map((p) => p.field)).toEqual([
      'sources[0].schema.plan.events["Lookahead"].properties',
      'sources[0].schema.plan.events["Counted"].properties',
    ])
    expect(problems[0]!.message).toContain('"^(?=a)a$"')
    expect(problems[0]!.message).toMatch(/linear time/)
    expect(problems[1]!.message).toContain(`more than ${PATTERN_INSTRUCTIONS_PER_SCHEMA}`)
    expect(problems[1]!.message).toContain('maxLength')
  })
})
