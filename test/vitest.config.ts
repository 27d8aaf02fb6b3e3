import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    // The config lives in test/ to keep the top level to the files the project chose.
    root: fileURLToPath(new URL('..', import.meta.url)),
    include: ['test/**/*.test.ts'],
    // One real PostgreSQL server for the run (the relay's tests run on both stores), and the
    // `tracklet` command built once for every file that runs it in child processes.
    globalSetup: ['test/support/postgres-global-setup.ts', 'test/support/cli-global-setup.ts'],
    // Wire tests start real local servers and child processes: give them room on a shared,
    // noisy machine, but never assert on wall-clock time.
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // The tests mostly wait (on servers, child processes, PostgreSQL), so files run three at a time
    // on any machine: vitest's default, one fewer than the cores, would run them one by one on two.
    maxWorkers: 3,
    restoreMocks: true,
  },
})
