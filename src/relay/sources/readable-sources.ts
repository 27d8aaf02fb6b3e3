import { RelayError } from '../errors'
import { log } from '../log'
import type { StoredSource } from '../store/source-configs'
import { decodeStored } from './api-source-codec'
import type { SecretBox } from '../config/secrets-key'
import type { ApiSource, UnreadableSource } from './source-registry'

/** The stored API sources as the relay can serve them, and those it cannot read. */
export interface DecodedSources {
  sources: ApiSource[]
  unreadable: UnreadableSource[]
}

/**
 * Each stored source decoded with `box`. One whose secrets `box` cannot open (`secretsKey` missing
 * or not the one they were written with) is left out and listed, logged at error, so it costs
 * that source alone and never the others or the config file's (docs/relay.md, "Secrets at rest").
 */
export function decodeReadable(stored: readonly StoredSource[], box: SecretBox): DecodedSources {
  const decoded: DecodedSources = { sources: [], unreadable: [] }
  for (const source of stored) {
    try {
      decoded.sources.push(decodeStored(source, box))
    } catch (error) {
      if (!(error instanceof RelayError) || error.code !== 'ERR_SECRETS_KEY') throw error
      decoded.unreadable.push({ name: source.name, error: error.message })
      log.error(`${error.message}; the source is not served until then`, {
        event: 'source-unreadable',
        source: source.name,
      })
    }
  }
  return decoded
}
