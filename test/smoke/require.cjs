// Loads the built package through its exports map with require(), as a CommonJS user would.
// p-queue ships ESM only and is bundled into the CJS build: this proves that works.
const { Analytics } = require('tracklet')
const { sign, verifySignature, formatMessage, WebhookDestination } = require('tracklet/webhooks')
const { createRelay } = require('tracklet/relay')

const { checkPackage } = require('./check-package.cjs')

checkPackage({ Analytics, sign, verifySignature, formatMessage, WebhookDestination, createRelay })
  .then(() => console.log('require(): ok'))
  .catch((error) => {
    console.error('require(): FAILED', error)
    process.exit(1)
  })
