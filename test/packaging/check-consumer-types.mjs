// CI step: the package's typings compile in a user's project with `skipLibCheck: false`, for
// every target from es2020 to esnext, with module resolution node16 and bundler, from ESM and
// CommonJS. Builds the package first (unless `--built`), then compiles a tiny consumer project
// against dist/ with the repository's TypeScript. A typing that needs a newer lib than the
// target's (ErrorOptions before es2022, say) fails here, as it would fail a user.
import { execFile, execFileSync } from 'node:child_process'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

const root = fileURLToPath(new URL('../..', import.meta.url))
const TARGETS = ['es2020', 'es2021', 'es2022', 'es2023', 'es2024', 'esnext']
const RESOLUTIONS = [
  { name: 'node16', module: 'node16', moduleResolution: 'node16' },
  { name: 'bundler', module: 'preserve', moduleResolution: 'bundler' },
]

// Code a user coming from Segment writes, importing every entry point by name (the package
// resolves itself by name from inside its own folder).
const ESM = `import { Analytics, type AnalyticsOptions, type TrackParams } from 'tracklet'
import { formatMessage, WebhookError } from 'tracklet/webhooks'
import type { RelayOptions } from 'tracklet/relay'

interface OrderProperties {
  revenue: number
  currency: string
}
const properties: OrderProperties = { revenue: 9.99, currency: 'EUR' }
const userId: string | undefined = process.env['USER_ID']
const options: AnalyticsOptions = { host: 'http://127.0.0.1:8787', maxEventsInBatch: 1 }
const analytics = new Analytics({ writeKey: 'k', ...options })
const params: TrackParams = { userId, anonymousId: 'a', event: 'Order Completed', properties }
analytics.track(params, (err) => err?.code)
const relayOptions: RelayOptions | undefined = undefined
export { analytics, formatMessage, relayOptions, WebhookError }
`
const CJS = `import tracklet = require('tracklet')
import webhooks = require('tracklet/webhooks')
const analytics = new tracklet.Analytics('k', { disable: true })
analytics.identify({ userId: '42', traits: { plan: 'pro' } })
export = { analytics, WebhookError: webhooks.WebhookError }
`

const dir = join(root, '.tmp', 'consumer-types')
rmSync(dir, { recursive: true, force: true })
mkdirSync(dir, { recursive: true })
writeFileSync(join(dir, 'consumer.mts'), ESM)
writeFileSync(join(dir, 'consumer.cts'), CJS)

// `--built`: dist/ is current (CI built it with `npm ci` a few steps before): no second build.
if (!process.argv.includes('--built')) {
  execFileSync('npm', ['run', '--silent', 'build', '--', '--silent'], { cwd: root, stdio: 'inherit' })
}

const tsc = join(root, 'node_modules/.bin/tsc')
const run = promisify(execFile)
const projects = TARGETS.flatMap((target) => RESOLUTIONS.map((resolution) => ({ target, resolution })))
for (const { target, resolution } of projects) {
  writeFileSync(
    join(dir, `tsconfig.${target}.${resolution.name}.json`),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        exactOptionalPropertyTypes: true,
        noEmit: true,
        target,
        module: resolution.module,
        moduleResolution: resolution.moduleResolution,
        types: ['node'],
        typeRoots: [join(root, 'node_modules/@types')],
        skipLibCheck: false,
      },
      files: ['consumer.mts', 'consumer.cts'],
    }),
  )
}

// Two at a time: CI machines are small, and each compile is mostly one core's work.
const failures = []
const queue = [...projects]
async function worker() {
  for (let project = queue.shift(); project !== undefined; project = queue.shift()) {
    const name = `tsconfig.${project.target}.${project.resolution.name}.json`
    try {
      await run(tsc, ['-p', join(dir, name)])
    } catch (error) {
      failures.push(`${name}:\n${error.stdout || error.message}`)
    }
  }
}
await Promise.all([worker(), worker()])
if (failures.length > 0) {
  console.error(`the package's typings do not compile in a consumer project:\n\n${failures.join('\n')}`)
  console.error(`the projects are in ${dir}`)
  process.exit(1)
}
console.log(
  `the typings compile with skipLibCheck: false for ${TARGETS.join(', ')} × module ${RESOLUTIONS.map((r) => r.name).join(', ')}`,
)
