import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { build } from 'tsup'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type Receiver, startReceiver, status } from './helpers/receiver'

// The child processes run plain Node on the SDK compiled once, here, by esbuild through tsup
// (no dts): a few hundred milliseconds, and no dependency on a previous `npm run build`.
// The output sits under node_modules/ so that its imports of undici, p-queue and debug resolve.
const root = fileURLToPath(new URL('../..', import.meta.url))
let outDir: string
let entry: string

beforeAll(async () => {
  outDir = mkdtempSync(join(root, 'node_modules', '.tracklet-process-test-'))
  await build({
    config: false,
    entry: { index: join(root, 'src/index.ts') },
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outDir,
    silent: true,
  })
  entry = pathToFileURL(join(outDir, 'index.js')).href
})

afterAll(() => rmSync(outDir, { recursive: true, force: true }))

let receiver: Receiver
afterEach(() => receiver.close())

interface Exit {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs a fixture with plain Node; kills it (and fails the test) if it has not exited on its own. */
function run(fixture: string, env: Record<string, string>): Promise<Exit> {
  const script = fileURLToPath(new URL(`fixtures/${fixture}`, import.meta.url))
  const child = spawn(process.execPath, [script], { env: { ...process.env, ...env, TRACKLET_ENTRY: entry } })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const guard = setTimeout(() => child.kill('SIGKILL'), 15_000)
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(guard)
      resolve({ code, stdout, stderr })
    }),
  )
}

describe('the process and the client', () => {
  it('a script that creates a client and does nothing exits by itself', async () => {
    receiver = await startReceiver()
    const exit = await run('idle-client.mjs', { ENDPOINT: receiver.endpoint })
    expect(exit).toEqual({ code: 0, stdout: 'exit beforeExit-listeners=0\n', stderr: '' })
    expect(receiver.requests).toHaveLength(0)
  })

  it('a script that queues a message and never closes still delivers it before exiting', async () => {
    receiver = await startReceiver()
    const exit = await run('forgetful-script.mjs', { ENDPOINT: receiver.endpoint })
    expect(exit).toEqual({ code: 0, stdout: 'settled 0 delivered\nexit beforeExit-listeners=0\n', stderr: '' })
    expect(receiver.messages().map((message) => message.event)).toEqual(['forgotten-0'])
  })

  it('retries before exiting when the first attempt fails, the backoff holding the process', async () => {
    receiver = await startReceiver((request, response, index) =>
      index === 0 ? status(503)(request, response, index) : response.end('{}'),
    )
    const exit = await run('forgetful-script.mjs', { ENDPOINT: receiver.endpoint })
    expect(exit.stdout).toBe('settled 0 delivered\nexit beforeExit-listeners=0\n')
    expect(receiver.requests).toHaveLength(2)
  })

  it('many clients share one beforeExit listener: no MaxListenersExceededWarning, all delivered', async () => {
    receiver = await startReceiver()
    const exit = await run('forgetful-script.mjs', { ENDPOINT: receiver.endpoint, CLIENTS: '15' })
    expect(exit.stderr).toBe('')
    expect(exit.code).toBe(0)
    expect(exit.stdout.match(/delivered/g)).toHaveLength(15)
    expect(receiver.messages()).toHaveLength(15)
  })
})
