import { RELAY_DEFAULTS } from '../relay/config/defaults'
import { DEFAULT_LOG_LEVEL, LOG_LEVELS } from '../relay/log'
import { LIBRARY_NAME, LIBRARY_VERSION } from '../shared/version'

// The help of the `tracklet` command and of `tracklet relay`. `tracklet send`'s help lives beside
// its flags, in send-args.ts. Every flag is listed with its default, as `git help` and `npm help` do.

/** `tracklet --help`, and the usage printed (to stderr) for an unknown command or flag. */
export const MAIN_HELP = `usage: tracklet <command> [flags]
       tracklet --writeKey=KEY --type=TYPE [flags]   (no command: send)
       tracklet --help | --version

Commands:
  send     send one message through the SDK and wait until the endpoint accepts it
  relay    run the relay: ingest API, durable outbox, webhook delivery
  tail     print a relay's live stream; forward a source's messages to a local URL
  function run a destination's function on events, delivering nothing (tracklet function test)
  typegen  print a TypeScript event map from a source's tracking plan, for Analytics<Events>

Flags:
  -h, --help       show this help and exit
  -v, --version    print the version and exit

Run \`tracklet <command> --help\` for a command's flags.
Exit codes: 0 success, 1 the command failed, 2 bad arguments.`

/**
 * `tracklet relay --help`. Printed here rather than by the relay's module, so that asking for help
 * never loads the relay and its database drivers.
 */
export const RELAY_HELP = `usage: tracklet relay --config FILE [--database URL|PATH] [--port N] [--host H] [--workers N]
                     [--check]

Runs the relay (ingest API, durable outbox, webhook delivery), prints the URL it listens on and
the store it opened, and runs until SIGINT or SIGTERM, when it closes cleanly. On SIGHUP it reads
the config again and applies its sources and alerts whole (an invalid file changes nothing: each
problem is logged; another changed option is logged as needing a restart). Any string in the
config may be, or contain, \${NAME}: read from the environment variable NAME at start (an unset
one is an error), so the file need hold no secret.

Flags:
  -c, --config FILE        the relay's JSON config file (required; no default)
  --database URL|PATH      the outbox: a postgres:// URL or a SQLite file path (default: the
                           config's \`database\`; else $DATABASE_URL; else ${RELAY_DEFAULTS.database})
  --port N                 the port to listen on, overriding the config's (default: the
                           config's \`port\`, else ${RELAY_DEFAULTS.port}; 0 picks a free one)
  --host H                 the address to listen on, overriding the config's (default: the
                           config's \`host\`, else ${RELAY_DEFAULTS.host})
  --workers N              relay processes on one port and one store, overriding the config's
                           (default: the config's \`workers\`, else ${RELAY_DEFAULTS.workers}); a dead one is restarted
  --check                  validate the config (environment references included), print every
                           problem and warning, open nothing, and exit
  -h, --help               show this help and exit

Database precedence: --database, then the config's \`database\`, then $DATABASE_URL (read only when
the config names no database).

Environment:
  LOG_LEVEL                the least severe level logged: ${LOG_LEVELS.join(', ')}; read when the
                           config sets no \`logLevel\` (default ${DEFAULT_LOG_LEVEL}; debug logs every message)
  LOG_FORMAT               text (the default) or json: one JSON object per line, with fields
  DATABASE_URL             the outbox, when neither --database nor the config names one

Exit codes: 0 closed cleanly (or --check found no problem), 1 the config or the store could not be
opened, a worker could not start or did not close cleanly (or --check found a problem), 2 bad
arguments.`

/** `tracklet --version`. */
export const VERSION_TEXT = `${LIBRARY_NAME} ${LIBRARY_VERSION}`

/** Whether the arguments ask for help (`--help` or `-h`) anywhere before a `--`. */
export function asksForHelp(args: readonly string[]): boolean {
  for (const arg of args) {
    if (arg === '--') return false
    if (arg === '--help' || arg === '-h') return true
  }
  return false
}
