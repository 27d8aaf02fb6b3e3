/** A one-row version table: the API sources' `config_version`, the suppressions' `suppression_version`. */
export type VersionTable = 'config_version' | 'suppression_version'

/**
 * The statements of a version table, the same text in both dialects: read it, and bump it (a
 * write that changed something does, last in its transaction, so every relay's poll sees it).
 */
export function versionStatements(table: VersionTable): { version: string; bump: string } {
  return {
    version: `SELECT version FROM ${table} WHERE id = 1`,
    bump: `UPDATE ${table} SET version = version + 1 WHERE id = 1 RETURNING version`,
  }
}
