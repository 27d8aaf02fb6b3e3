import { defineConfig } from 'tsup'

const libraryEntries = {
  index: 'src/index.ts',
  'webhooks/index': 'src/webhooks/index.ts',
  'relay/index': 'src/relay/index.ts',
}

export default defineConfig([
  {
    entry: libraryEntries,
    format: 'esm',
    target: 'node20',
    platform: 'node',
    dts: true,
    sourcemap: true,
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
  },
  {
    entry: { cli: 'src/cli/main.ts' },
    format: 'esm',
    target: 'node20',
    platform: 'node',
    sourcemap: true,
    banner: { js: '#!/usr/bin/env node' },
  },
])
