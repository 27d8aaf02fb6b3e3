// The fetch build's `log.ts`. debug (even its browser build) reads process.env.DEBUG as it loads,
// which Deno refuses without --allow-env (an uncaught NotCapable at `import 'tracklet'`) or
// prompts for on a terminal, and Workers have no process.env at all. Here DEBUG is read only
// where that is allowed without asking, and the lines go to console.debug.

const NAMESPACE = 'analytics'

type EnvQuery = (descriptor: { name: 'env'; variable: string }) => { state: string }

/** The `DEBUG` setting, where the runtime lets the package read it without asking. */
function debugSetting(): string | undefined {
  const scope = globalThis as {
    Deno?: { permissions?: { querySync?: EnvQuery } }
    process?: { env?: Record<string, string | undefined> }
  }
  try {
    const query = scope.Deno?.permissions?.querySync
    if (query !== undefined && query({ name: 'env', variable: 'DEBUG' }).state !== 'granted') return undefined
    return scope.process?.env?.DEBUG
  } catch {
    return undefined
  }
}

/** Whether `DEBUG` names this log, as debug reads it: `analytics`, `*`, `prefix*`; `-name` excludes. */
export function debugEnables(setting: string | undefined): boolean {
  let enabled = false
  for (const pattern of setting?.split(/[\s,]+/) ?? []) {
    const excluded = pattern.startsWith('-')
    const name = excluded ? pattern.slice(1) : pattern
    if (name === '') continue
    const matches = name.endsWith('*') ? NAMESPACE.startsWith(name.slice(0, -1)) : name === NAMESPACE
    if (matches) enabled = !excluded
  }
  return enabled
}

const enabled = debugEnables(debugSetting())

/** The client's log, formatted as debug formats it (`%s`, `%d`, `%O`); never given the write key. */
export const log = Object.assign(
  (format: string, ...args: unknown[]): void => {
    if (enabled) console.debug(`${NAMESPACE} ${format}`, ...args)
  },
  { enabled },
)
