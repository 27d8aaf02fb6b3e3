import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { describe, expect, inject, it } from 'vitest'

// `tracklet --help`, `--version`, `tracklet <command> --help` and bad command lines, run as a user
// runs them: the built command in its own process.

/** The command built once for the run (test/support/cli-global-setup.ts). */
const cliPath = inject('cliPath')

function tracklet(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env }
  delete env['DEBUG']
  delete env['DATABASE_URL']
  return new Promise((resolve) => {
    execFile(process.execPath, [cliPath, ...args], { env }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1
      resolve({ code, stdout, stderr })
    })
  })
}

describe('tracklet (the built command)', () => {
  it('prints its help to stdout and exits 0 for --help, -h and `help`', async () => {
    for (const args of [['--help'], ['-h'], ['help']]) {
      const result = await tracklet(args)
      expect(result).toMatchObject({ code: 0, stderr: '' })
      expect(result.stdout).toMatch(/^usage: tracklet <command> \[flags\]\n/)
      expect(result.stdout).toMatch(/\n {2}send {5}\S/)
      expect(result.stdout).toMatch(/\n {2}relay {4}\S/)
      expect(result.stdout).toContain('-h, --help')
      expect(result.stdout).toContain('-v, --version')
    }
  })

  it("prints the package's version to stdout and exits 0", async () => {
    const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string
    }
    for (const flag of ['--version', '-v']) {
      expect(await tracklet([flag])).toEqual({ code: 0, stdout: `tracklet ${version}\n`, stderr: '' })
    }
  })

  it('prints the relay help, with every flag and its default, without starting a relay', async () => {
    // With or without other flags, and with no config file: help never opens one.
    for (const args of [
      ['relay', '--help'],
      ['relay', '-h'],
      ['relay', '--config', 'missing.json', '--help'],
      ['help', 'relay'],
    ]) {
      const result = await tracklet(args)
      expect(result).toMatchObject({ code: 0, stderr: '' })
      expect(result.stdout).toMatch(
        /^usage: tracklet relay --config FILE \[--database URL\|PATH\] \[--port N\] \[--host H\] \[--workers N\]\n {21}\[--check\]\n/,
      )
      expect(result.stdout).toMatch(/\n {2}-c, --config FILE +the relay's JSON config file \(required; no default\)\n/)
      expect(result.stdout).toMatch(
        /\n {2}--database URL\|PATH +the outbox: .*\(default: the\n +config's `database`; else \$DATABASE_URL; else tracklet\.db\)\n/,
      )
      expect(result.stdout).toContain(
        "Database precedence: --database, then the config's `database`, then $DATABASE_URL (read only when\nthe config names no database).",
      )
      expect(result.stdout).toMatch(/\n {2}--port N +the port to listen on, overriding the config's/)
      expect(result.stdout).toMatch(/\n {2}--check +validate the config/)
      expect(result.stdout).toMatch(/\n {2}-h, --help +show this help and exit\n/)
    }
  })

  it('prints the send help for `help send` as for `send --help`', async () => {
    const viaHelp = await tracklet(['help', 'send'])
    expect(viaHelp.code).toBe(0)
    expect(viaHelp.stdout).toMatch(/^usage: tracklet send /)
    expect(viaHelp.stdout).toBe((await tracklet(['send', '--help'])).stdout)
  })

  it('exits 2 with the usage on stderr when no command is given', async () => {
    const result = await tracklet([])
    expect(result.code).toBe(2)
    expect(result.stdout).toBe('')
    expect(result.stderr).toMatch(/^tracklet: no command given\n\nusage: tracklet <command> \[flags\]\n/)
  })

  it('exits 2 with one line naming the nearest command or flag for a misspelt one', async () => {
    const cases: Array<[string[], string]> = [
      [['sned'], 'tracklet: unknown command: sned (did you mean `send`?) (see tracklet --help)\n'],
      [['rely'], 'tracklet: unknown command: rely (did you mean `relay`?) (see tracklet --help)\n'],
      [['deploy'], 'tracklet: unknown command: deploy (see tracklet --help)\n'],
      [['--verison'], 'tracklet: unknown flag: --verison (did you mean `--version`?) (see tracklet --help)\n'],
      [['--bogus'], 'tracklet: unknown flag: --bogus (see tracklet --help)\n'],
      [['help', 'sned'], 'tracklet: no help for unknown command: sned (did you mean `send`?) (see tracklet --help)\n'],
    ]
    for (const [args, stderr] of cases) {
      const result = await tracklet(args)
      expect({ args, code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({
        args,
        code: 2,
        stdout: '',
        stderr,
      })
    }
  })
})

describe('tracklet help function', () => {
  it('lists `function` among the commands of the main help', async () => {
    const result = await tracklet(['--help'])
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/\n {2}function \S/)
  })

  it('prints the function help for `help function` as for `function --help`', async () => {
    const viaHelp = await tracklet(['help', 'function'])
    expect(viaHelp).toMatchObject({ code: 0, stderr: '' })
    expect(viaHelp.stdout).toMatch(/^usage: tracklet function test FILE --event FILE/)
    expect(viaHelp.stdout).toBe((await tracklet(['function', '--help'])).stdout)
  })
})
