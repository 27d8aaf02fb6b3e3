import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { build } from 'esbuild'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { answer, startReceiver, type TestReceiver } from './receiver'

// An application that called the global fetch() before it loaded the destination: on Node 20 and
// 22, Node's own undici (6.x) then holds the global dispatcher, and the destination, sending with
// no dispatcher of its own, goes through that one. It must still deliver (and time out, and keep a
// failure's answer) as with undici 7's. Run in a child process: the global dispatcher is the
// process's, and the test runner's has long been claimed by undici 7.
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const run = promisify(execFile)
let dir: string
let bundle: string
let hook: TestReceiver

beforeAll(async () => {
  await mkdir(join(ROOT, '.tmp'), { recursive: true })
  // Inside the project, so that the bundle's undici resolves from its node_modules.
  dir = await mkdtemp(join(ROOT, '.tmp', 'node-fetch-'))
  bundle = join(dir, 'webhooks.mjs')
  await build({
    entryPoints: [join(ROOT, 'src/webhooks/index.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    outfile: bundle,
    logLevel: 'silent',
  })
  hook = await startReceiver((req, res) =>
    req.url?.includes('fail') ? answer(503, { 'retry-after': '7' })(req, res, Buffer.alloc(0)) : res.end('ok'),
  )
})

afterAll(async () => {
  await hook?.close()
  await rm(dir, { recursive: true, force: true })
})

describe('WebhookDestination after a fetch() claimed the global dispatcher', () => {
  it('delivers, and reads a failure with its Retry-After, through the dispatcher fetch() installed', async () => {
    const script = join(dir, 'send.mjs')
    await writeFile(
      script,
      `
      const answered = await fetch(${JSON.stringify(hook.url)})
      await answered.text()
      const dispatcher = globalThis[Symbol.for('undici.globalDispatcher.1')]
      const { WebhookDestination } = await import(${JSON.stringify(bundle)})
      const message = { type: 'track', userId: 'ada', event: 'Signed Up', timestamp: '2026-01-02T03:04:05.678Z' }
      const ok = await new WebhookDestination({ webhooks: [{ url: ${JSON.stringify(hook.url)} }] }).send(message)
      const failed = await new WebhookDestination({ webhooks: [{ url: ${JSON.stringify(`${hook.url}?fail`)} }] }).send(message)
      console.log(JSON.stringify({ sameDispatcher: dispatcher === globalThis[Symbol.for('undici.globalDispatcher.1')], ok, failed }))
      `,
    )
    const { stdout } = await run(process.execPath, [script], { cwd: ROOT })
    const result = JSON.parse(stdout)
    expect(result.sameDispatcher).toBe(true)
    expect(result.ok).toMatchObject({ ok: true, attempts: [{ status: 200 }] })
    expect(result.failed).toMatchObject({ ok: false, retryable: true, attempts: [{ status: 503, retryAfterMs: 7000 }] })
  })
})
