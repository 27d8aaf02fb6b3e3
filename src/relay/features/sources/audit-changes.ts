import { isPlainObject } from '../../../shared/validate'
import type { SourceDestinations, SourceSchema } from '../../config/options'
import { maskSecrets } from '../../sources/source-secrets'

/** A source's settings as an audit entry compares them. */
export interface AuditedSettings {
  enabled: boolean
  destinations: SourceDestinations
  schema: SourceSchema
}

/** One field a change touched, its values before and after (secrets as `"***"`). */
export interface FieldChange {
  path: string
  from: unknown
  to: unknown
}

/**
 * What a replace changed, field by field: compared in clear (a secret changed is a change) and
 * written masked (never the secret). Objects are compared key by key; arrays and values whole.
 */
export function changedFields(before: AuditedSettings, after: AuditedSettings): FieldChange[] {
  const changes: FieldChange[] = []
  const shownBefore = shown(before)
  const shownAfter = shown(after)
  const walk = (a: unknown, b: unknown, maskedA: unknown, maskedB: unknown, path: string): void => {
    if (isPlainObject(a) && isPlainObject(b)) {
      for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
        const next = path === '' ? key : `${path}.${key}`
        walk(a[key], b[key], (maskedA as Record<string, unknown>)[key], (maskedB as Record<string, unknown>)[key], next)
      }
      return
    }
    if (JSON.stringify(a) !== JSON.stringify(b)) changes.push({ path, from: maskedA ?? null, to: maskedB ?? null })
  }
  walk(before, after, shownBefore, shownAfter, '')
  return changes
}

/** `settings` as an audit entry may show them: secrets masked. */
export function shown(settings: AuditedSettings): AuditedSettings {
  return { ...settings, destinations: maskSecrets(settings.destinations) }
}
