import { argv, exit, stderr } from 'node:process'

// `tracklet <command> [--flags]`. Each command lives in its own module, loaded only when named,
// so `tracklet send` never loads the relay's SQLite binding.
const USAGE = `usage:
  tracklet send --writeKey=KEY --type=track --userId=ID --event=NAME [--properties=JSON] ...
  tracklet relay --config tracklet.config.json [--database postgres://… | FILE]`

async function main(args: string[]): Promise<number> {
  const [command, ...rest] = args
  switch (command) {
    case 'send':
      return (await import('./send')).runSend(rest)
    case 'relay':
      return (await import('./relay')).runRelay(rest)
    default:
      stderr.write(`${command === undefined ? 'no command given' : `unknown command: ${command}`}\n${USAGE}\n`)
      return 2
  }
}

main(argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    stderr.write(`tracklet: ${error instanceof Error ? error.message : String(error)}\n`)
    exit(1)
  },
)
