import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

// Not a test run: it writes docs/operator-page*.png from relays holding realistic data.
//   npx vitest run --config test/browser/screenshot.config.ts
export default defineConfig({
  test: {
    root: fileURLToPath(new URL('../..', import.meta.url)),
    // The console's browser tests save their views as they go (TRACKLET_SCREENSHOTS below).
    include: ['test/browser/*.screenshot.ts', 'test/browser/console.test.ts'],
    env: { TRACKLET_SCREENSHOTS: '1' },
    // The console's views (a store outage) run on a real PostgreSQL server.
    globalSetup: ['test/support/postgres-global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
})
