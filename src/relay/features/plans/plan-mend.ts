import type { SchemaCheck, SchemaError } from '../../config/plan-compiler'
import type { ViolationKind } from '../../store/violations'

// How an error of the validator becomes a violation (its kind and path), and how `omit` takes the
// offending values out of a copy of `properties` or `traits` (docs/plans.md).

/** An error of the validator, as a violation says it: its kind, its JSON Pointer under the field, its sentence. */
export interface Finding {
  kind: ViolationKind
  /** The JSON Pointer under the checked field (`/revenue`, `/address/zip`); empty for the field itself. */
  pointer: string
  message: string
  /** Whether removing the value at `pointer` takes the violation away. */
  removable: boolean
}

// Rules about a value's own contents: removing the value would remove a parent for what a child
// lacks, so `omit` leaves them (the violation is still recorded).
const WHOLE_VALUE_KEYWORDS = new Set([
  'required',
  'dependencies',
  'dependentRequired',
  'minProperties',
  'minItems',
  'contains',
])

/**
 * The violations in `errors`. Errors inside `anyOf` / `oneOf` branches are left out: the
 * combinator's own error says the value matched none (or several), once.
 */
export function findingsOf(errors: readonly SchemaError[]): Finding[] {
  const findings: Finding[] = []
  for (const error of errors) {
    if (/\/(anyOf|oneOf)\/\d+\//.test(error.schemaPath)) continue
    const params = error.params as Record<string, unknown>
    if (error.keyword === 'required') {
      const name = String(params['missingProperty'])
      const pointer = `${error.instancePath}/${escapePointer(name)}`
      findings.push({
        kind: 'required',
        pointer,
        message: `required property ${JSON.stringify(name)} is missing`,
        removable: false,
      })
    } else if (error.keyword === 'additionalProperties') {
      const name = String(params['additionalProperty'])
      const pointer = `${error.instancePath}/${escapePointer(name)}`
      findings.push({
        kind: 'additional',
        pointer,
        message: `property ${JSON.stringify(name)} is not in the plan`,
        removable: true,
      })
    } else {
      findings.push({
        kind: error.keyword === 'type' ? 'type' : 'other',
        pointer: error.instancePath,
        message: error.message ?? `fails ${error.keyword}`,
        // The field itself (`properties` as a whole) is never removed: only what is in it.
        removable: error.instancePath !== '' && !WHOLE_VALUE_KEYWORDS.has(error.keyword),
      })
    }
  }
  return findings
}

/**
 * What the mended value (`omit`'s copy) breaks that the sent one did not: a required property
 * whose value was taken out is missing now. Only rules on a whole value can appear by removal,
 * and none of them is removable, so one more check finds them all.
 */
export function leftByRemoval(schema: SchemaCheck, mended: unknown, before: readonly Finding[]): Finding[] {
  if (schema(mended)) return []
  const seen = new Set(before.map((f) => `${f.kind} ${f.pointer}`))
  return findingsOf(schema.errors ?? []).filter((f) => !seen.has(`${f.kind} ${f.pointer}`))
}

/**
 * A copy of `value` without the values at `pointers` (each a leaf the checked field's schema
 * refused: a nested property goes, never its parent). Deepest and last array items first, so one
 * removal never moves another's target. Only the objects and arrays on the way to a removed value
 * are copied (shallow, once each); everything else is shared with `value`, which is left as it is:
 * a deep clone of the whole field cost more than the check that found the violation.
 */
export function withoutPointers(value: unknown, pointers: readonly string[]): unknown {
  const paths = [...new Set(pointers)].map((pointer) => pointer.split('/').slice(1).map(unescapePointer))
  paths.sort((a, b) => compareDescending(a, b))
  const copies = new WeakSet<object>()
  const copy = copyOnce(value, copies)
  for (const path of paths) remove(copy, path, copies)
  return copy
}

// `value` itself if it is one of `copies` (or not a container), else a shallow copy, noted there.
function copyOnce(value: unknown, copies: WeakSet<object>): unknown {
  if (typeof value !== 'object' || value === null || copies.has(value)) return value
  const copy = Array.isArray(value) ? value.slice() : { ...value }
  copies.add(copy)
  return copy
}

function remove(root: unknown, path: readonly string[], copies: WeakSet<object>): void {
  let parent = root
  for (const key of path.slice(0, -1)) {
    if (typeof parent !== 'object' || parent === null || !Object.hasOwn(parent, key)) return
    const child = copyOnce((parent as Record<string, unknown>)[key], copies)
    ;(parent as Record<string, unknown>)[key] = child
    parent = child
  }
  const last = path.at(-1)
  if (last === undefined || typeof parent !== 'object' || parent === null) return
  if (Array.isArray(parent)) {
    const index = Number(last)
    if (Number.isInteger(index) && index >= 0 && index < parent.length) parent.splice(index, 1)
  } else delete (parent as Record<string, unknown>)[last]
}

// Longer paths first; among siblings, larger array indices first.
function compareDescending(a: readonly string[], b: readonly string[]): number {
  if (a.length !== b.length) return b.length - a.length
  for (let i = 0; i < a.length; i++) {
    if (a[i] === b[i]) continue
    const [x, y] = [Number(a[i]), Number(b[i])]
    return Number.isInteger(x) && Number.isInteger(y) ? y - x : a[i]! < b[i]! ? 1 : -1
  }
  return 0
}

/** A property name as one JSON Pointer token (RFC 6901: `~` as `~0`, `/` as `~1`). */
export function escapePointer(name: string): string {
  return name.replace(/~/g, '~0').replace(/\//g, '~1')
}

function unescapePointer(token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~')
}
