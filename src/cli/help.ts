import { LIBRARY_NAME, LIBRARY_VERSION } from '../shared/version'

// The help of the `tracklet` command and of `tracklet relay`. `tracklet send`'s help lives beside
// its flags, in send-args.ts. Every flag is listed with its default, as `git help` and `npm help` do.

/** `tracklet --help`, and the usage printed (to stderr) for an unknown command or flag. */
export const MAIN_HELP = `usage: tracklet <command> [flags]
       tracklet --help | --version

Commands:
  send     send one message through the SDK and wait until the endpoint accepts it
  relay    run the relay: ingest API, durable outbox, webhook delivery

Flags:
  -h, --help       show this help and exit
  -v, --version    print the version and exit

Run \`tracklet <command> --help\` for a command's flags.
Exit codes: 0 success, 1 the command failed, 2 bad arguments.`

/**
 * `tracklet relay --help`. Printed here rather than by the relay's module, so that asking for help
 * never loads the relay and its database drivers.
 */
export const RELAY_HELP = `usage: tracklet relay --config FILE [--database URL|PATH]

Runs the relay (ingest API, durable outbox, webhook delivery), prints the URL it listens on,
and runs until SIGINT or SIGTERM, when it closes cleanly.

Flags:
  -c, --config FILE        the relay's JSON config file (required; no default)
  --database URL|PATH      the outbox: a postgres:// URL or a SQLite file path; overrides the
                           config's \`database\` (default: $DATABASE_URL if set, else the config's)
  -h, --help               show this help and exit

Exit codes: 0 closed cleanly, 1 the config or the store could not be opened, 2 bad arguments.`

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
