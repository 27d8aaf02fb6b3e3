import type { WarehouseConflict } from './schema/evolution'

// A conflict's value is shown only this far: enough to see what was sent, never a page of it.
const VALUE_SHOWN = 80

/** The conflicts a delivered outcome's `detail` carries (docs/warehouse.md, "Conflicts"). */
export function conflictsOf(detail: Readonly<Record<string, unknown>>): readonly WarehouseConflict[] {
  const conflicts = detail['conflicts']
  return Array.isArray(conflicts) ? (conflicts as WarehouseConflict[]) : []
}

/**
 * What the delivery log shows of a message's conflicts, one line each:
 * `stored as NULL (type conflict): tracks.price = "a lot"`.
 */
export function conflictText(conflicts: readonly WarehouseConflict[]): string {
  return conflicts
    .map(({ table, column, value }) => {
      const shown = JSON.stringify(value) ?? String(value)
      const cut = shown.length > VALUE_SHOWN ? `${shown.slice(0, VALUE_SHOWN)}…` : shown
      return `stored as NULL (type conflict): ${table}.${column} = ${cut}`
    })
    .join('\n')
}
