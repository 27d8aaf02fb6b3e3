import { describe, expect, it } from 'vitest'
import { parseSendArgs } from '../../src/cli/send-args'

const KEY = 'wk_secret_123'

function problemOf(args: string[], env: Record<string, string> = {}): string {
  const parsed = parseSendArgs(args, env)
  if (parsed.kind !== 'invalid') throw new Error(`expected a problem, got ${JSON.stringify(parsed)}`)
  return parsed.problem
}

describe('parseSendArgs', () => {
  it('reads the tester contract with --flag=value', () => {
    const parsed = parseSendArgs([
      `--writeKey=${KEY}`,
      '--type=track',
      '--userId=u1',
      '--event=Order Completed',
      '--properties={"revenue":9.99,"items":[1,2]}',
      '--context={"ip":"1.2.3.4"}',
      '--integrations={"All":false,"Webhooks":true}',
      '--timestamp=2026-01-02T03:04:05.678Z',
      '--endpoint=http://127.0.0.1:8787',
    ])
    expect(parsed).toEqual({
      kind: 'send',
      request: {
        writeKey: KEY,
        endpoint: 'http://127.0.0.1:8787',
        type: 'track',
        timeout: 30_000,
        fields: {
          userId: 'u1',
          event: 'Order Completed',
          properties: { revenue: 9.99, items: [1, 2] },
          context: { ip: '1.2.3.4' },
          integrations: { All: false, Webhooks: true },
          timestamp: '2026-01-02T03:04:05.678Z',
        },
      },
    })
  })

  it('accepts --flag value as well, and JSON values with spaces', () => {
    const parsed = parseSendArgs([
      '--writeKey',
      KEY,
      '--type',
      'identify',
      '--anonymousId',
      'a1',
      '--traits',
      '{ "plan": "pro" }',
    ])
    expect(parsed).toEqual({
      kind: 'send',
      request: {
        writeKey: KEY,
        endpoint: undefined,
        type: 'identify',
        timeout: 30_000,
        fields: { anonymousId: 'a1', traits: { plan: 'pro' } },
      },
    })
  })

  it.each([
    [
      'page',
      ['--userId=u', '--name=Pricing', '--category=Docs', '--properties={"path":"/p"}'],
      { userId: 'u', name: 'Pricing', category: 'Docs', properties: { path: '/p' } },
    ],
    ['screen', ['--userId=u', '--name=Home'], { userId: 'u', name: 'Home' }],
    [
      'group',
      ['--userId=u', '--groupId=acme', '--traits={"employees":120}'],
      { userId: 'u', groupId: 'acme', traits: { employees: 120 } },
    ],
    ['alias', ['--userId=u', '--previousId=anon-7'], { userId: 'u', previousId: 'anon-7' }],
  ])('builds a %s call from its own flags', (type, flags, fields) => {
    expect(parseSendArgs([`--writeKey=${KEY}`, `--type=${type}`, ...flags])).toMatchObject({
      kind: 'send',
      request: { type, fields },
    })
  })

  it('takes the write key from TRACKLET_WRITE_KEY when --writeKey is absent', () => {
    const parsed = parseSendArgs(['--type=track', '--userId=u', '--event=E'], { TRACKLET_WRITE_KEY: KEY })
    expect(parsed).toMatchObject({ kind: 'send', request: { writeKey: KEY } })
  })

  it('asks for --help', () => {
    expect(parseSendArgs(['--help'])).toEqual({ kind: 'help' })
  })

  it('names the flag whose JSON is invalid, and the parser error', () => {
    const problem = problemOf([`--writeKey=${KEY}`, '--type=track', '--userId=u', '--event=E', '--properties={a:1}'])
    expect(problem).toMatch(/^--properties is not valid JSON \(.+\): "\{a:1\}"$/)
  })

  it('refuses JSON that is not an object', () => {
    expect(problemOf([`--writeKey=${KEY}`, '--type=identify', '--userId=u', '--traits=[1]'])).toBe(
      '--traits must be a JSON object, got an array',
    )
    expect(problemOf([`--writeKey=${KEY}`, '--type=identify', '--userId=u', '--context=null'])).toBe(
      '--context must be a JSON object, got null',
    )
  })

  it('requires a write key', () => {
    expect(problemOf(['--type=track', '--userId=u', '--event=E'])).toBe(
      '--writeKey is required (or set TRACKLET_WRITE_KEY)',
    )
    expect(problemOf(['--writeKey=', '--type=track', '--userId=u', '--event=E'])).toMatch(/^--writeKey is required/)
  })

  it('lists the valid types when --type is missing or unknown', () => {
    expect(problemOf([`--writeKey=${KEY}`, '--userId=u'])).toBe(
      '--type is required: one of identify, track, page, screen, group, alias',
    )
    expect(problemOf([`--writeKey=${KEY}`, '--type=click', '--userId=u'])).toBe(
      'unknown --type "click": use one of identify, track, page, screen, group, alias',
    )
  })

  it('applies the SDK rules for the call type, naming the missing field', () => {
    expect(problemOf([`--writeKey=${KEY}`, '--type=track', '--userId=u'])).toBe(
      'invalid track message: track needs event',
    )
    expect(problemOf([`--writeKey=${KEY}`, '--type=identify'])).toBe(
      'invalid identify message: identify needs userId or anonymousId',
    )
    expect(problemOf([`--writeKey=${KEY}`, '--type=alias', '--userId=u'])).toBe(
      'invalid alias message: alias needs previousId',
    )
    expect(problemOf([`--writeKey=${KEY}`, '--type=group', '--userId=u'])).toBe(
      'invalid group message: group needs groupId',
    )
    expect(problemOf([`--writeKey=${KEY}`, '--type=track', '--userId=', '--event=E'])).toBe(
      'invalid track message: userId must be a non-empty string, got ""',
    )
    expect(
      problemOf([`--writeKey=${KEY}`, '--type=track', '--userId=u', '--event=E', '--timestamp=yesterday']),
    ).toMatch(
      /^invalid track message: timestamp must be a Date or an ISO 8601 string with a time zone, got "yesterday"$/,
    )
  })

  it('refuses a flag that the call type does not take, instead of dropping it', () => {
    expect(problemOf([`--writeKey=${KEY}`, '--type=identify', '--userId=u', '--event=E'])).toBe(
      '--event does not apply to --type=identify (it takes --userId, --anonymousId, --messageId, --timestamp, --context, --integrations, --traits)',
    )
  })

  it('reads --timeout in milliseconds, and refuses one that is not a positive whole number', () => {
    const args = [`--writeKey=${KEY}`, '--type=track', '--userId=u', '--event=E']
    const parsed = parseSendArgs([...args, '--timeout', '2500'])
    expect(parsed.kind === 'send' && parsed.request.timeout).toBe(2500)
    for (const bad of ['0', '-5', '1.5', '3s', '', '2147483648']) {
      expect(problemOf([...args, `--timeout=${bad}`])).toBe(
        `--timeout must be a whole number of milliseconds from 1 to 2147483647, got ${JSON.stringify(bad)}`,
      )
    }
  })

  it('refuses an endpoint that is not an http(s) URL', () => {
    expect(
      problemOf([`--writeKey=${KEY}`, '--type=track', '--userId=u', '--event=E', '--endpoint=localhost:8787']),
    ).toBe('--endpoint must be an http: or https: URL, got "localhost:8787"')
  })

  it('reports unknown flags, stray arguments and missing values', () => {
    expect(problemOf([`--writeKey=${KEY}`, '--type=track', '--user=u'])).toBe(
      'unknown flag --user (did you mean `--userId`?)',
    )
    expect(problemOf([`--writeKey=${KEY}`, '--type=track', '--frobnicate'])).toBe('unknown flag --frobnicate')
    expect(problemOf([`--writeKey=${KEY}`, 'track'])).toMatch(/Unexpected argument 'track'/)
    expect(problemOf([`--writeKey=${KEY}`, '--type'])).toMatch(/'--type <value>' argument missing/)
  })

  it('takes the kebab-case spelling of every camelCase flag', () => {
    const parsed = parseSendArgs([
      `--write-key=${KEY}`,
      '--type=group',
      '--anonymous-id',
      'a-1',
      '--group-id=g-1',
      '--message-id=m-1',
    ])
    expect(parsed).toMatchObject({
      kind: 'send',
      request: { writeKey: KEY, type: 'group', fields: { anonymousId: 'a-1', groupId: 'g-1', messageId: 'm-1' } },
    })
    const alias = parseSendArgs([`--write-key=${KEY}`, '--type=alias', '--user-id=u', '--previous-id=p'])
    expect(alias).toMatchObject({ kind: 'send', request: { fields: { userId: 'u', previousId: 'p' } } })
  })

  it('never puts the write key in a problem', () => {
    const cases = [
      [`--writeKey=${KEY}`, '--type=nope'],
      [`--writeKey=${KEY}`, '--type=track', '--properties=oops'],
      [`--writeKey=${KEY}`, '--bogus'],
      [`--writekey=${KEY}`, '--type=track'],
      ['--write-key', KEY, KEY],
      ['--writeKey', KEY, KEY],
    ]
    for (const args of cases) expect(problemOf(args)).not.toContain(KEY)
  })

  it('redacts a short write key only where it stands as a value, never inside words', () => {
    expect(problemOf(['--writeKey=e', '--type=nope'])).toBe(
      'unknown --type "nope": use one of identify, track, page, screen, group, alias',
    )
    expect(problemOf(['--writeKey', 'ab', 'ab'])).toMatch(/^Unexpected argument '\[write key\]'/)
    expect(problemOf(['--type=track', 'e'], { TRACKLET_WRITE_KEY: 'e' })).toMatch(
      /^Unexpected argument '\[write key\]'\. This command does not take positional arguments/,
    )
  })
})
