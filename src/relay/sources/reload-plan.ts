import { isDeepStrictEqual } from 'node:util'
import { RelayConfigError } from '../errors'
import { log } from '../log'
import type { RelayOptions, RelaySource, ResolvedRelayOptions } from '../config/options'

/**
 * The options a reload applies (docs/relay.md, "Reloading the config file"). Every other option
 * is read once, at start: a change to it is logged as needing a restart and not applied.
 */
export const RELOADABLE_KEYS = ['sources', 'alerts'] as const

/** What a reload changed: the sources by name, and whether `alerts` did. Never a secret. */
export interface ReloadChanges {
  /** Sources the new file names that the running config did not. */
  added: string[]
  /** Sources in both whose settings (write key, destinations, schema) differ. */
  changed: string[]
  /** Sources the running config had that the new file no longer names. */
  removed: string[]
  /** Whether `alerts` changed (its URL, its events, or set or unset). */
  alerts: boolean
  /** The options that changed but need a restart, so were not applied (`port`, `adminToken`, …). */
  restartNeeded: string[]
}

/**
 * The options that differ between the running `current` and the `next` a file asks for, among
 * those a reload does not apply, in alphabetical order: by name only (their values may be secrets).
 */
export function restartNeededKeys(current: ResolvedRelayOptions, next: ResolvedRelayOptions): string[] {
  const names = new Set([...Object.keys(current), ...Object.keys(next)])
  const reloadable: readonly string[] = RELOADABLE_KEYS
  return [...names]
    .sort()
    .filter(
      (name) =>
        !reloadable.includes(name) &&
        !isDeepStrictEqual(current[name as keyof ResolvedRelayOptions], next[name as keyof ResolvedRelayOptions]),
    )
}

/** `current` with the options a reload applies taken from `next`, and every other one kept. */
export function withReloadable<T extends RelayOptions>(current: T, next: RelayOptions): T {
  return { ...current, sources: next.sources, alerts: next.alerts }
}

/** What applying `next` over `current` changes (the restart-needed keys included). */
export function reloadChanges(current: ResolvedRelayOptions, next: ResolvedRelayOptions): ReloadChanges {
  const before = new Map(current.sources.map((source) => [source.name, source]))
  const after = new Map(next.sources.map((source) => [source.name, source]))
  const changed = (source: RelaySource) => !isDeepStrictEqual(before.get(source.name), source)
  return {
    added: next.sources.filter((source) => !before.has(source.name)).map((source) => source.name),
    changed: next.sources.filter((source) => before.has(source.name) && changed(source)).map((s) => s.name),
    removed: current.sources.filter((source) => !after.has(source.name)).map((source) => source.name),
    alerts: !isDeepStrictEqual(current.alerts, next.alerts),
    restartNeeded: restartNeededKeys(current, next),
  }
}

/**
 * Logs a refused reload at `error`: one line per problem (each with its field's path), then one
 * saying the running config stays. Never a value: the problems name fields, not what they hold.
 */
export function logRefusedReload(error: unknown): void {
  const problems =
    error instanceof RelayConfigError ? error.problems : [{ field: undefined, message: (error as Error).message }]
  for (const { field, message } of problems) {
    const where = field === undefined ? '' : `${field}: `
    log.error(`config reload refused: ${where}${message}`, {
      event: 'config-reload-refused',
      ...(field === undefined ? {} : { field }),
    })
  }
  log.error('config reload refused: the running config stays', { event: 'config-reload-refused' })
}

/** Logs at `warn` the changed options a reload did not apply, as needing a restart. */
export function logRestartNeeded(keys: readonly string[]): void {
  if (keys.length === 0) return
  log.warn(
    `config reload: ${keys.join(', ')} changed, which ${keys.length === 1 ? 'needs' : 'need'} a restart: not applied (a reload applies ${RELOADABLE_KEYS.join(' and ')} only)`,
    { event: 'config-reload-restart-needed', keys: keys.join(',') },
  )
}
