import type { ParseArgsConfig } from 'node:util'
import { classifyAddress } from '../relay/net/address'
import { isHttpUrl, readFlags } from './read-flags'

/** What `tracklet tail` was asked to do. */
export interface TailArgs {
  /** The relay's base URL. */
  relay: string
  adminToken: string
  source: string | undefined
  /** One JSON object per event on stdout, nothing else there. */
  json: boolean
  /** A local URL each of the source's messages is also POSTed to, as its Webhooks destination sends it. */
  forwardTo: string | undefined
}

/** `tracklet tail --help`. */
export const TAIL_USAGE = `usage: tracklet tail --relay URL --admin-token T [--source S] [--json]
       tracklet tail --relay URL --admin-token T --source S --forward-to URL [--json]

Prints the relay's live stream (GET /v1/stream) as it happens: messages ingested, refused and
filtered, and each delivery attempt with the receiver's answer, from every relay on the store.

Flags:
  --relay URL           the relay's base URL (required)
  --admin-token T       the relay's admin token (required; or $TRACKLET_ADMIN_TOKEN)
  --source S            only this source's events
  --json                one JSON object per event on stdout ({ "kind", "data" }) and nothing
                        else; everything else goes to stderr
  --forward-to URL      also POST each of the source's messages to this local URL (localhost,
                        127.0.0.1, [::1]), formatted and signed by the relay as the source's
                        Webhooks destination sends it (needs --source; the shared secret never
                        leaves the relay)
  -h, --help            show this help and exit

A relay that ends the stream or goes away once it was read (a restart) is asked again, every 0.5 s
at first and up to every 10 s, said on stderr; events meanwhile are not shown.

Exit codes: 0 stopped by SIGINT or SIGTERM, 1 the relay refused the stream (or could not be reached
at first), 2 bad arguments.`

const OPTIONS = {
  relay: { type: 'string' },
  'admin-token': { type: 'string' },
  source: { type: 'string' },
  json: { type: 'boolean' },
  'forward-to': { type: 'string' },
} as const satisfies ParseArgsConfig['options']

/** `tracklet tail`'s arguments, or what is wrong with them as one line. */
export function parseTailArgs(
  args: readonly string[],
  env: Record<string, string | undefined> = process.env,
): TailArgs | { problem: string } {
  const read = readFlags(args, OPTIONS)
  if ('problem' in read) return read
  const { values } = read
  const relay = values['relay']
  if (typeof relay !== 'string' || !isHttpUrl(relay)) return { problem: '--relay must be the relay’s http(s) URL' }
  const adminToken = (values['admin-token'] as string | undefined) ?? env['TRACKLET_ADMIN_TOKEN']
  if (adminToken === undefined || adminToken === '') {
    return { problem: '--admin-token is required (or set TRACKLET_ADMIN_TOKEN)' }
  }
  const source = values['source'] as string | undefined
  const forwardTo = values['forward-to'] as string | undefined
  if (forwardTo !== undefined && !isHttpUrl(forwardTo)) return { problem: '--forward-to must be an http(s) URL' }
  if (forwardTo !== undefined && !isLocalUrl(forwardTo)) {
    return {
      problem:
        '--forward-to must be a local URL (localhost, 127.0.0.1, [::1]): each message, with the data of your ' +
        'users and a valid signature, would go to another machine',
    }
  }
  if (forwardTo !== undefined && source === undefined) {
    return { problem: '--forward-to needs --source: the messages of one source are forwarded' }
  }
  return { relay: relay.replace(/\/+$/, ''), adminToken, source, json: values['json'] === true, forwardTo }
}

// A URL of this machine: `localhost` (and its subdomains, RFC 6761) or a loopback address. The
// forwarded messages are real ones, signed; they are for a receiver under development here.
function isLocalUrl(url: string): boolean {
  const host = new URL(url).hostname.toLowerCase()
  if (host === 'localhost' || host.endsWith('.localhost')) return true
  return classifyAddress(host) === 'loopback'
}
