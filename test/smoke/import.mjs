// Loads the built package through its exports map with import(), as an ESM user would.
import { createRequire } from 'node:module'

const { Analytics } = await import('tracklet')
const { sign, verifySignature, formatMessage, WebhookDestination } = await import('tracklet/webhooks')
const { createRelay } = await import('tracklet/relay')
const { checkPackage } = createRequire(import.meta.url)('./check-package.cjs')

await checkPackage({ Analytics, sign, verifySignature, formatMessage, WebhookDestination, createRelay })
console.log('import(): ok')
