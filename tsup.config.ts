import { dirname, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Plugin } from 'esbuild'
import { defineConfig } from 'tsup'

const libraryEntries = {
  index: 'src/index.ts',
  'webhooks/index': 'src/webhooks/index.ts',
  'relay/index': 'src/relay/index.ts',
}

const root = dirname(fileURLToPath(import.meta.url))
const webhooksEntry = resolve(root, 'src/webhooks/index')

/**
 * The relay uses the Webhooks destination only through its public entry, and loads that entry's
 * built file at run time instead of bundling a copy: each class (WebhookError, …) then exists once
 * in dist/, so `instanceof` holds between `tracklet/relay` and `tracklet/webhooks`.
 */
function webhooksAsSibling(extension: '.js' | '.cjs'): Plugin {
  return {
    name: 'webhooks-as-sibling',
    setup(build) {
      build.onResolve({ filter: /\/webhooks\/index$/ }, (args) => {
        const target = resolve(args.resolveDir, args.path)
        const fromRelay = relative(resolve(root, 'src/relay'), args.importer)
        if (target !== webhooksEntry || fromRelay.startsWith('..')) return undefined
        // Every relay module ends up in dist/relay/index.*, beside dist/webhooks/.
        return { path: `../webhooks/index${extension}`, external: true }
      })
    },
  }
}

/**
 * The build for Bun, Deno, Cloudflare Workers and Vercel Edge: the SDK with its `fetch` transport.
 * Every Node-only use of the SDK is behind `src/sdk/platform/`: here `runtime.ts`, `body-writer.ts`
 * and `log.ts` (debug) are swapped for their `.web.ts`, and the dependencies (p-queue) are bundled
 * in, so the file imports nothing: no `node:` module, no undici (test/packaging checks it).
 */
function webPlatform(): Plugin {
  return {
    name: 'web-platform',
    setup(build) {
      build.onResolve({ filter: /\/platform\/(runtime|body-writer|log)$/ }, (args) => ({
        path: resolve(args.resolveDir, `${args.path}.web.ts`),
      }))
    },
  }
}

/**
 * Source maps name each line's file and line in src/ but carry no copy of the sources (esbuild's
 * `sourcesContent`): stack traces still map under `--enable-source-maps`, and the package, which
 * ships no src/, stays small (the SDK-only install is held to 12 MiB: src/relay/peers.ts).
 */
function mapsWithoutSources(options: { sourcesContent?: boolean }): void {
  options.sourcesContent = false
}

export default defineConfig([
  {
    entry: libraryEntries,
    format: 'esm',
    target: 'node20',
    platform: 'node',
    dts: true,
    sourcemap: true,
    esbuildOptions: mapsWithoutSources,
    esbuildPlugins: [webhooksAsSibling('.js')],
  },
  {
    entry: libraryEntries,
    format: 'cjs',
    target: 'node20',
    platform: 'node',
    dts: true,
    sourcemap: true,
    // p-queue (and its own dependencies) ship ESM only. Bundling them into the CommonJS build
    // lets `require('tracklet')` work on every Node 20, not only where require(esm) exists.
    noExternal: ['p-queue', 'p-timeout', 'eventemitter3'],
    esbuildOptions: mapsWithoutSources,
    esbuildPlugins: [webhooksAsSibling('.cjs')],
  },
  {
    entry: { 'web/index': 'src/index.ts' },
    format: 'esm',
    target: 'es2022',
    platform: 'browser',
    // Its types are the Node build's (dist/index.d.ts): the same public API.
    dts: false,
    sourcemap: true,
    noExternal: [/.*/],
    esbuildOptions: mapsWithoutSources,
    esbuildPlugins: [webPlatform()],
  },
  {
    entry: { cli: 'src/cli/main.ts' },
    format: 'esm',
    target: 'node20',
    platform: 'node',
    sourcemap: true,
    banner: { js: '#!/usr/bin/env node' },
    // The command is a program of its own, which may bundle its own copy of the library: its
    // chunks go under cli/, never among the library's dist/chunk-*.js (test/smoke/single-copies).
    esbuildOptions(options) {
      options.chunkNames = 'cli/[name]-[hash]'
      mapsWithoutSources(options)
    },
  },
])
