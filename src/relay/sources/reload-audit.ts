import type { SourceConfigStore } from '../store/source-configs'
import type { ReloadChanges } from './reload-plan'

/**
 * The audit log's `config.reloaded` entry of a reload applied (actor `file`): which sources the
 * file added, changed and removed, whether `alerts` changed, and the options left for a restart,
 * by name only (never a value: they may be secrets). With `--workers N`, each process that
 * applied the reload writes its entry.
 */
export function auditReload(
  store: Pick<SourceConfigStore, 'appendAudit'>,
  now: () => number = Date.now,
): (changes: ReloadChanges) => Promise<void> {
  return (changes) =>
    store.appendAudit({
      at: now(),
      actor: 'file',
      action: 'config.reloaded',
      target: 'config file',
      changes: JSON.stringify(changes),
    })
}
