import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type BrowserContext, chromium } from 'playwright-core'

/** Where Debian's `chromium` package puts the browser; `CHROMIUM_PATH` names another. */
export const CHROMIUM_PATH = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium'

/** Whether the browser tests run: when Chromium is there, and always in CI (where its absence fails them). */
export const hasChromium = existsSync(CHROMIUM_PATH)
export const runBrowserTests = hasChromium || process.env['CI'] === 'true'

/** Why the browser tests were skipped, for the suite's title. */
export const SKIP_REASON = `skipped: no Chromium at ${CHROMIUM_PATH} (apt-get install chromium, or set CHROMIUM_PATH; in CI=true they run and fail)`

// Headless, and nothing that reaches out: the machine may have no outside network at all.
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

/** A headless Chromium with a fresh profile; `close()` removes the profile too. */
export async function launchChromium(): Promise<{ context: BrowserContext; close: () => Promise<void> }> {
  if (!hasChromium) {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM_PATH}: install Debian's chromium package (apt-get install -y chromium) or set CHROMIUM_PATH`,
    )
  }
  const profile = mkdtempSync(join(tmpdir(), 'tracklet-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ARGS,
    viewport: { width: 1280, height: 900 },
  })
  return {
    context,
    close: async () => {
      await context.close()
      rmSync(profile, { recursive: true, force: true })
    },
  }
}
