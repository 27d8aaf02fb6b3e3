import { argv, exit, stderr, stdout } from 'node:process'
import { didYouMean } from '../shared/nearest-name'
import { asksForHelp, MAIN_HELP, RELAY_HELP, VERSION_TEXT } from './help'
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE } from './exit-codes'

// `tracklet <command> [--flags]`. Each command lives in its own module, loaded only when named,
// so `tracklet send` never loads the relay's SQLite binding.

// What `tracklet` itself takes (the cases of main's switch), for the nearest-name hint of a
// misspelling. The long flags only: any two-character slip is one edit from -h or -v, a guess.
const COMMANDS = ['send', 'relay', 'tail', 'function', 'typegen', 'help']
const MAIN_FLAGS = ['--help', '--version']

async function main(args: string[]): Promise<number> {
  const [command, ...rest] = args
  switch (command) {
    case 'send':
      return (await import('./send')).runSend(rest)
    case 'relay':
      // Answered here, so that help never opens the relay's module (or its database drivers).
      if (asksForHelp(rest)) return printed(RELAY_HELP)
      return (await import('./relay')).runRelay(rest)
    case 'tail':
      return (await import('./tail')).runTail(rest)
    case 'typegen':
      return (await import('./typegen')).runTypegen(rest)
    case 'function':
      return (await import('./function')).runFunction(rest)
    case 'help':
      // `tracklet help [command]`, as git and npm take it.
      return helpFor(rest[0])
    case '--help':
    case '-h':
      return printed(MAIN_HELP)
    case '--version':
    case '-v':
      return printed(VERSION_TEXT)
    case undefined:
      return usageError('no command given')
    default:
      // `tracklet --writeKey=… --type=…`: the cross-library tester runs the binary with send's
      // flags and no command.
      if (startsSend(command)) return (await import('./send')).runSend(args)
      return command.startsWith('-')
        ? mistake(`unknown flag: ${command}${didYouMean(command, MAIN_FLAGS)}`)
        : mistake(`unknown command: ${command}${didYouMean(command, COMMANDS)}`)
  }
}

/** Whether `flag` is one of the two flags every `send` needs, so a bare `tracklet` means send. */
function startsSend(flag: string): boolean {
  return /^--(writeKey|write-key|type)(=|$)/.test(flag)
}

async function helpFor(command: string | undefined): Promise<number> {
  switch (command) {
    case undefined:
      return printed(MAIN_HELP)
    case 'send':
      return printed((await import('./send-args')).SEND_USAGE)
    case 'relay':
      return printed(RELAY_HELP)
    case 'tail':
      return printed((await import('./tail-args')).TAIL_USAGE)
    case 'typegen':
      return printed((await import('./typegen')).TYPEGEN_USAGE)
    case 'function':
      return printed((await import('./function')).FUNCTION_USAGE)
    default:
      return mistake(`no help for unknown command: ${command}${didYouMean(command, COMMANDS)}`)
  }
}

function printed(text: string): number {
  stdout.write(`${text}\n`)
  return EXIT_OK
}

function usageError(problem: string): number {
  stderr.write(`tracklet: ${problem}\n\n${MAIN_HELP}\n`)
  return EXIT_USAGE
}

/** A misspelt command or flag: one line, with the nearest name, as `tracklet send` answers. */
function mistake(problem: string): number {
  stderr.write(`tracklet: ${problem} (see tracklet --help)\n`)
  return EXIT_USAGE
}

main(argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    stderr.write(`tracklet: ${error instanceof Error ? error.message : String(error)}\n`)
    exit(EXIT_FAILED)
  },
)
