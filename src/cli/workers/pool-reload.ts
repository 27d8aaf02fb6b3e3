import type { RelayOptions } from '../../relay/index'
import { logRefusedReload, logRestartNeeded, restartNeededKeys, withReloadable } from '../../relay/sources/reload-plan'
import { validateRelayOptions } from '../../relay/config/validate'
import { loadFunctions } from '../../relay/features/functions/load'

/**
 * The primary's half of a reload under `tracklet relay --workers N`: checks the file's options
 * once for all the workers (every problem logged at `error`, once; each option that needs a
 * restart logged at `warn`, once), so that only a config every worker can apply is passed on.
 * Returns the options to pass on and to start later workers with: `running` with the file's
 * `sources` and `alerts` (what a reload applies), or `undefined` when refused.
 */
export async function checkedReload(
  running: RelayOptions,
  read: () => Promise<RelayOptions>,
): Promise<RelayOptions | undefined> {
  try {
    const given = await read()
    const resolved = validateRelayOptions(given)
    // The functions compile (each file read anew), or the workers would each refuse the reload.
    await (await loadFunctions(resolved)).close()
    logRestartNeeded(restartNeededKeys(validateRelayOptions(running), resolved))
    return withReloadable(running, given)
  } catch (error) {
    logRefusedReload(error)
    return undefined
  }
}
