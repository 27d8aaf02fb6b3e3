import { parseArgs, type ParseArgsConfig } from 'node:util'
import { MESSAGE_TYPES, type MessageType } from '../shared/message'
import { describe, findMessageProblem, isPlainObject } from '../shared/validate'
import { DEFAULT_OPTIONS, MAX_TIMER_MS } from '../sdk/options'
import { kebabCase, normalizeFlags } from './flag-spellings'
import { isHttpUrl } from './read-flags'
import { redactWriteKeys } from './redact'

/** What `tracklet send` was asked to do, once its arguments are known to be valid. */
export interface SendRequest {
  writeKey: string
  /** `undefined` leaves the SDK's default endpoint. */
  endpoint: string | undefined
  type: MessageType
  /** The most the whole send may take, in milliseconds, the SDK's retries included. */
  timeout: number
  /** The call's fields, as the SDK's `type` call takes them (checked with the shared rules). */
  fields: Record<string, unknown>
}

/** The outcome of reading the arguments: a request, a request for help, or what was wrong. */
export type ParsedSendArgs =
  | { kind: 'send'; request: SendRequest }
  | { kind: 'help' }
  | { kind: 'invalid'; problem: string }

/** Flags whose value is JSON text that must be an object. */
const JSON_FLAGS = ['properties', 'traits', 'context', 'integrations'] as const
const STRING_FLAGS = [
  'userId',
  'anonymousId',
  'messageId',
  'timestamp',
  'event',
  'name',
  'category',
  'groupId',
  'previousId',
] as const
type FieldFlag = (typeof JSON_FLAGS)[number] | (typeof STRING_FLAGS)[number]

const COMMON_FIELDS: readonly FieldFlag[] = [
  'userId',
  'anonymousId',
  'messageId',
  'timestamp',
  'context',
  'integrations',
]

/** The fields each call type takes beyond the common ones, as in the SDK's `*Params` types. */
const FIELDS_BY_TYPE: Readonly<Record<MessageType, readonly FieldFlag[]>> = {
  identify: ['traits'],
  track: ['event', 'properties'],
  page: ['name', 'category', 'properties'],
  screen: ['name', 'category', 'properties'],
  group: ['groupId', 'traits'],
  alias: ['previousId'],
}

/** The environment variable read when `--writeKey` is absent (keeps the key out of `ps`). */
export const WRITE_KEY_ENV = 'TRACKLET_WRITE_KEY'

/** The environment variable read when `--endpoint` is absent (a relay's URL, set once per shell). */
export const ENDPOINT_ENV = 'TRACKLET_ENDPOINT'

/** `--timeout`'s default: as long as `closeAndFlush()` waits by default, and past the retries' own backoffs. */
export const DEFAULT_SEND_TIMEOUT = 30_000

export const SEND_USAGE = `usage: tracklet send --writeKey=KEY --type=TYPE [message fields] [--endpoint=URL] [--timeout=MS]

Sends one message through the SDK (flushAt 1) and waits until the endpoint accepts it, refuses
it, or --timeout passes; each retry is said on stderr as it starts. Exit 0 means the endpoint
answered 2xx: the tracking API (or a relay) took the message. Delivery to destinations is the
relay's, later. Without --endpoint or $${ENDPOINT_ENV}, messages go to Segment's API.

Flags:
  --writeKey KEY        the source's write key (required; default: $${WRITE_KEY_ENV})
  --type TYPE           ${MESSAGE_TYPES.join(' | ')} (required)
  --endpoint URL        the tracking API's base URL (default: $${ENDPOINT_ENV}, else ${DEFAULT_OPTIONS.endpoint})
  --timeout MS          the most the whole send may take, retries included (default: ${DEFAULT_SEND_TIMEOUT})
  -h, --help            show this help and exit

Message fields (default: absent, unless noted):
  --userId ID           the user (userId or anonymousId is required)
  --anonymousId ID      the anonymous visitor
  --messageId ID        the message's id (default: a random UUID)
  --timestamp TIME      when it happened, ISO 8601 with a zone (default: now)
  --event NAME          track: the event (required for track)
  --name NAME           page, screen: the page or screen name
  --category NAME       page, screen: its category
  --groupId ID          group: the group (required for group)
  --previousId ID       alias: the previous id (required for alias, with --userId)
  --properties JSON     track, page, screen: a JSON object, e.g. --properties='{"plan":"pro"}'
  --traits JSON         identify, group: a JSON object
  --context JSON        a JSON object (default: {}; context.library is always added)
  --integrations JSON   destination flags, e.g. '{"All":false,"Webhooks":true}' (default: none)

Flags take --flag=value or --flag value; each camelCase flag may be written in kebab-case too
(${['writeKey', ...STRING_FLAGS]
  .filter((flag) => /[A-Z]/.test(flag))
  .map((flag) => `--${kebabCase(flag)}`)
  .join(', ')}).
Exit codes: 0 accepted, 1 not accepted (refused, failed or timed out), 2 bad arguments.`

const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  writeKey: { type: 'string' },
  type: { type: 'string' },
  endpoint: { type: 'string' },
  timeout: { type: 'string' },
  ...Object.fromEntries([...STRING_FLAGS, ...JSON_FLAGS].map((flag) => [flag, { type: 'string' }])),
} as const satisfies ParseArgsConfig['options']

/**
 * Reads `tracklet send`'s arguments (`--flag=value` or `--flag value`) into a request, checking
 * the message with the same rules the SDK applies, so that a mistake is reported by flag name
 * before anything is sent. Never throws.
 */
export function parseSendArgs(
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>> = {},
): ParsedSendArgs {
  const spelt = normalizeFlags(args, OPTIONS)
  // The keys are looked for in both spellings' common form (`--write-key` is `--writeKey`).
  const keys = writeKeysIn('args' in spelt ? spelt.args : args, env)
  const parsed = 'args' in spelt ? readSendArgs(spelt.args, env) : invalid(spelt.problem)
  if (parsed.kind !== 'invalid') return parsed
  // A problem may quote any argument (a stray one, a misplaced value): never the write key.
  return invalid(redactWriteKeys(parsed.problem, keys))
}

function readSendArgs(args: readonly string[], env: Readonly<Record<string, string | undefined>>): ParsedSendArgs {
  let values: Record<string, string | boolean | undefined>
  try {
    values = parseArgs({ args: [...args], options: OPTIONS, strict: true, allowPositionals: false }).values
  } catch (error) {
    return invalid((error as Error).message)
  }
  if (values['help'] === true) return { kind: 'help' }

  const writeKey = text(values['writeKey']) ?? env[WRITE_KEY_ENV]
  if (writeKey === undefined || writeKey === '') {
    return invalid(`--writeKey is required (or set ${WRITE_KEY_ENV})`)
  }

  const type = text(values['type'])
  if (type === undefined) return invalid(`--type is required: one of ${MESSAGE_TYPES.join(', ')}`)
  if (!isMessageType(type)) {
    return invalid(`unknown --type ${describe(type)}: use one of ${MESSAGE_TYPES.join(', ')}`)
  }

  const endpoint = text(values['endpoint']) ?? nonEmpty(env[ENDPOINT_ENV])
  if (endpoint !== undefined && !isHttpUrl(endpoint)) {
    const given = text(values['endpoint']) === undefined ? `$${ENDPOINT_ENV}` : '--endpoint'
    return invalid(`${given} must be an http: or https: URL, got ${describe(endpoint)}`)
  }

  const timeout = parseTimeout(text(values['timeout']))
  if (typeof timeout === 'string') return invalid(timeout)

  const allowed = [...COMMON_FIELDS, ...FIELDS_BY_TYPE[type]]
  const fields: Record<string, unknown> = {}
  for (const flag of [...STRING_FLAGS, ...JSON_FLAGS]) {
    const value = text(values[flag])
    if (value === undefined) continue
    if (!allowed.includes(flag)) {
      return invalid(`--${flag} does not apply to --type=${type} (it takes ${allowed.map((f) => `--${f}`).join(', ')})`)
    }
    if (isJsonFlag(flag)) {
      const parsed = parseJsonObject(flag, value)
      if (!parsed.ok) return invalid(parsed.problem)
      fields[flag] = parsed.value
    } else {
      fields[flag] = value
    }
  }

  const problem = findMessageProblem(type, fields)
  if (problem !== undefined) return invalid(`invalid ${type} message: ${problem}`)
  return { kind: 'send', request: { writeKey, endpoint, type, timeout, fields } }
}

/** Every value given as a write key, read leniently so that it is found even in bad arguments. */
function writeKeysIn(args: readonly string[], env: Readonly<Record<string, string | undefined>>): string[] {
  const keys = args.flatMap((arg, index) => {
    if (arg.startsWith('--writeKey=')) return [arg.slice('--writeKey='.length)]
    return arg === '--writeKey' && index + 1 < args.length ? [args[index + 1] as string] : []
  })
  return [...keys, env[WRITE_KEY_ENV] ?? ''].filter((key) => key !== '')
}

/** `--timeout`: a whole number of milliseconds from 1 to a timer's limit; a problem as a string. */
function parseTimeout(value: string | undefined): number | string {
  if (value === undefined) return DEFAULT_SEND_TIMEOUT
  const timeout = /^\d+$/.test(value) ? Number(value) : Number.NaN
  if (!(timeout >= 1 && timeout <= MAX_TIMER_MS)) {
    return `--timeout must be a whole number of milliseconds from 1 to ${MAX_TIMER_MS}, got ${describe(value)}`
  }
  return timeout
}

function parseJsonObject(
  flag: string,
  value: string,
): { ok: true; value: Record<string, unknown> } | { ok: false; problem: string } {
  let parsed: unknown
  try {
    parsed = JSON.parse(value)
  } catch (error) {
    return { ok: false, problem: `--${flag} is not valid JSON (${(error as Error).message}): ${describe(value)}` }
  }
  if (!isPlainObject(parsed)) return { ok: false, problem: `--${flag} must be a JSON object, got ${describe(parsed)}` }
  return { ok: true, value: parsed }
}

function invalid(problem: string): ParsedSendArgs {
  return { kind: 'invalid', problem }
}

// parseArgs types every value as string | boolean; the string flags only ever hold strings.
function text(value: string | boolean | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value
}

function isMessageType(value: string): value is MessageType {
  return (MESSAGE_TYPES as readonly string[]).includes(value)
}

function isJsonFlag(flag: FieldFlag): flag is (typeof JSON_FLAGS)[number] {
  return (JSON_FLAGS as readonly string[]).includes(flag)
}
