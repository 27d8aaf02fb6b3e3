import { createHash } from 'node:crypto'
import { RelayError } from '../errors'
import type { SourceDestinations, SourceSchema } from '../config/options'
import type { ApiSource, RegisteredSource } from './source-registry'
import { mapSecrets, maskSecrets } from './source-secrets'
import { type SecretBox, UndecryptableSecret } from '../config/secrets-key'
import { writeKeyPrefix } from '../kit/write-key-digest'
import type { StoredSource } from '../store/source-configs'
import { STORE_ID_PATTERN } from '../store/store-id'

/** What the store keeps of an API source's settings (as JSON), its secrets encrypted. */
export interface StoredSettings {
  destinations: SourceDestinations
  schema: SourceSchema
}

/** The settings' JSON for the store, every secret encrypted with `box`. */
export function encodeSettings(settings: StoredSettings, box: SecretBox): string {
  return JSON.stringify({ ...settings, destinations: mapSecrets(settings.destinations, (value) => box.encrypt(value)) })
}

/**
 * A stored source as the registry holds it, its secrets decrypted.
 * @throws {RelayError} `ERR_SECRETS_KEY` when `box` cannot decrypt one (a wrong or missing
 * `secretsKey`): a clear error, never a source silently left out.
 */
export function decodeStored(stored: StoredSource, box: SecretBox): ApiSource {
  const settings = JSON.parse(stored.settings) as StoredSettings
  let destinations: SourceDestinations
  try {
    destinations = mapSecrets(settings.destinations, (value) => box.decrypt(value))
  } catch (error) {
    if (!(error instanceof UndecryptableSecret)) throw error
    throw new RelayError(
      'ERR_SECRETS_KEY',
      `cannot decrypt the secrets stored for source ${JSON.stringify(stored.name)}: ${error.message}; start the relay with the secretsKey they were written with (docs/relay.md, "Rotating secretsKey")`,
      { cause: error },
    )
  }
  return {
    name: stored.name,
    enabled: stored.enabled,
    destinations,
    schema: settings.schema,
    writeKeyDigests: stored.writeKeys.map((key) => key.digest),
    revision: stored.revision,
  }
}

/** One write key as the admin API lists it (never the key). */
export interface WriteKeyView {
  id: string
  prefix: string
  createdAt: string | null
}

/** A source as `GET /v1/sources` answers it (docs/relay.md, "Sources through the API"): secrets masked. */
export interface SourceView {
  name: string
  provisioned: boolean
  enabled: boolean
  writeKeys: WriteKeyView[]
  destinations: SourceDestinations
  schema: SourceSchema
}

/** The id the file's one write key is listed by. */
export const FILE_WRITE_KEY_ID = 'file'

/** A file's source as the admin API shows it: its one key listed by {@link FILE_WRITE_KEY_ID}. */
export function fileSourceView(source: RegisteredSource): SourceView {
  const { settings } = source
  return {
    name: settings.name,
    provisioned: true,
    enabled: true,
    writeKeys: [
      {
        id: FILE_WRITE_KEY_ID,
        prefix: writeKeyPrefix(settings.writeKey),
        // When this relay loaded the key: the file says nothing of when it was made.
        createdAt: source.keyLoadedAt === undefined ? null : new Date(source.keyLoadedAt).toISOString(),
      },
    ],
    destinations: maskSecrets(settings.destinations ?? {}),
    schema: { ...settings.schema, blockedEvents: [...(settings.schema?.blockedEvents ?? [])] },
  }
}

/** An API source as the admin API shows it, from the store (its secrets, encrypted there, masked). */
export function storedSourceView(stored: StoredSource): SourceView {
  const settings = JSON.parse(stored.settings) as StoredSettings
  return {
    name: stored.name,
    provisioned: false,
    enabled: stored.enabled,
    writeKeys: stored.writeKeys.map((key) => ({
      id: key.id,
      prefix: key.prefix,
      createdAt: new Date(key.createdAt).toISOString(),
    })),
    destinations: maskSecrets(settings.destinations),
    schema: { ...settings.schema, blockedEvents: [...(settings.schema.blockedEvents ?? [])] },
  }
}

/**
 * A source's `ETag`: its revision in the store for an API source; for a file's source, a digest of
 * its settings (it changes only with the file).
 */
export function etagOf(source: RegisteredSource | StoredSource): string {
  if ('revision' in source && source.revision !== undefined) return `"r${source.revision}"`
  const digest = fileDigest(source as RegisteredSource)
  return `"f${digest}"`
}

function fileDigest(source: RegisteredSource): string {
  return createHash('sha256').update(JSON.stringify(source.settings)).digest('base64url').slice(0, 16)
}

// An `If-Match` of one revision, weak or strong: `"r7"`.
const IF_MATCH = new RegExp(`^\\s*(?:W/)?"r(${STORE_ID_PATTERN})"\\s*$`)

/** The revision an `If-Match` header names: `undefined` for none or `*`, `-1` for one no source has. */
export function revisionOfIfMatch(header: string | undefined): number | undefined {
  if (header === undefined || header.trim() === '*') return undefined
  const match = IF_MATCH.exec(header)
  return match === null ? -1 : Number(match[1])
}
