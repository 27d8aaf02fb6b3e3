import { execFile } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildCli } from '../support/build-cli'

// `tracklet function` in the main help, and `tracklet help function`, as a user runs them: the
// built command in its own process.

let cli: Awaited<ReturnType<typeof buildCli>>

beforeAll(async () => {
  cli = await buildCli()
})

afterAll(async () => {
  await cli?.remove()
})

function tracklet(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env }
  delete env['DEBUG']
  delete env['DATABASE_URL']
  return new Promise((resolve) => {
    execFile(process.execPath, [cli.cliPath, ...args], { env }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1
      resolve({ code, stdout, stderr })
    })
  })
}

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
