import { fileURLToPath, pathToFileURL } from 'node:url'
import { RelayConfigError, type RelayConfigProblem } from '../../errors'

/** The archive's file formats: gzipped NDJSON, or Parquet. */
export const ARCHIVE_FORMATS = ['ndjson', 'parquet'] as const
/** One of {@link ARCHIVE_FORMATS}. */
export type ArchiveFormat = (typeof ARCHIVE_FORMATS)[number]

/** The defaults of the archive's settings (docs/archive.md lists them; a test ties the two). */
export const ARCHIVE_DEFAULTS = Object.freeze({
  format: 'ndjson' as ArchiveFormat,
  /** A file is closed at this many messages. */
  maxFileMessages: 100_000,
  /** …or this many seconds after its first message, whichever comes first. */
  maxFileSeconds: 300,
})

/** The bounds of the numeric settings (each inclusive). */
export const ARCHIVE_LIMITS = Object.freeze({
  maxFileMessages: Object.freeze({ min: 1, max: 1_000_000 }),
  maxFileSeconds: Object.freeze({ min: 1, max: 3600 }),
})

/** A local folder. */
export interface FileLocation {
  kind: 'file'
  /** The folder's absolute path. */
  root: string
}

/** A bucket of Amazon S3 or any S3-compatible store, and a prefix in it. */
export interface S3Location {
  kind: 's3'
  bucket: string
  /** Without a leading or trailing `/`; `''` for the bucket's top. */
  prefix: string
  region: string
  /** The store's base URL (MinIO, R2, …); absent for Amazon S3 itself. */
  endpoint?: string
  /** `bucket` as the URL's first path segment instead of its host name. */
  forcePathStyle: boolean
  accessKeyId: string
  secretAccessKey: string
}

/** An Archive destination's resolved settings. */
export interface ArchiveSettings {
  location: FileLocation | S3Location
  format: ArchiveFormat
  maxFileMessages: number
  maxFileSeconds: number
}

const KNOWN = new Set(['url', 'format', 'maxFileMessages', 'maxFileSeconds', 's3'])
const S3_KNOWN = new Set(['region', 'endpoint', 'forcePathStyle', 'accessKeyId', 'secretAccessKey'])
// Amazon's rule for bucket names, which S3-compatible stores follow.
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * Checks an Archive destination's raw settings and resolves them over {@link ARCHIVE_DEFAULTS}.
 *
 * @param path The settings' path in the config, such as `sources[0].destinations.Archive`.
 * @throws {RelayConfigError} listing every problem, each with its field's path (never a secret).
 */
export function parseArchiveSettings(raw: unknown, path: string): ArchiveSettings {
  const problems: RelayConfigProblem[] = []
  const problem = (field: string, message: string): void => {
    problems.push({ field: `${path}.${field}`, message })
  }
  if (!isObject(raw)) {
    throw new RelayConfigError(path, 'must be an object such as { "url": "file:///var/lib/tracklet/archive" }')
  }
  for (const key of Object.keys(raw)) if (!KNOWN.has(key)) problem(key, 'is not a setting of the archive')

  const format = raw['format'] ?? ARCHIVE_DEFAULTS.format
  if (!ARCHIVE_FORMATS.includes(format as ArchiveFormat)) {
    problem('format', `must be "ndjson" or "parquet", got ${JSON.stringify(format)}`)
  }
  const count = (name: keyof typeof ARCHIVE_LIMITS): number => {
    const value = raw[name] ?? ARCHIVE_DEFAULTS[name]
    const { min, max } = ARCHIVE_LIMITS[name]
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      problem(name, `must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`)
    }
    return value as number
  }
  const maxFileMessages = count('maxFileMessages')
  const maxFileSeconds = count('maxFileSeconds')
  const location = parseLocation(raw, problem)

  if (problems.length > 0) throw new RelayConfigError(problems[0]!.field, problems[0]!.message, { problems })
  return {
    location: location!,
    format: format as ArchiveFormat,
    maxFileMessages,
    maxFileSeconds,
  }
}

type Problem = (field: string, message: string) => void

function parseLocation(raw: Record<string, unknown>, problem: Problem): ArchiveSettings['location'] | undefined {
  const url = raw['url']
  const parsed = typeof url === 'string' && URL.canParse(url) ? new URL(url) : undefined
  if (parsed?.protocol === 'file:') {
    if (raw['s3'] !== undefined) problem('s3', 'is only for an "s3://" url')
    if (parsed.search !== '' || parsed.hash !== '') problem('url', 'must have no query or fragment')
    try {
      return { kind: 'file', root: fileURLToPath(parsed) }
    } catch (error) {
      problem('url', `is not a local folder: ${(error as Error).message}`)
      return undefined
    }
  }
  if (parsed?.protocol === 's3:') {
    if (!BUCKET.test(parsed.hostname)) {
      problem('url', `must name a bucket of 3 to 63 lower-case letters, digits, "." or "-", got "${parsed.hostname}"`)
    }
    if (parsed.username !== '' || parsed.password !== '') {
      problem('url', 'must carry no credentials: put them in s3.accessKeyId and s3.secretAccessKey')
    }
    const prefix = decodeURIComponent(parsed.pathname).replace(/^\/+|\/+$/g, '')
    const s3 = parseS3(raw['s3'], problem)
    return s3 && { kind: 's3', bucket: parsed.hostname, prefix, ...s3 }
  }
  problem('url', 'must be a "file://" folder or "s3://bucket/prefix" URL')
  return undefined
}

function parseS3(raw: unknown, problem: Problem): Omit<S3Location, 'kind' | 'bucket' | 'prefix'> | undefined {
  if (!isObject(raw)) {
    problem('s3', 'must be an object { region, endpoint?, forcePathStyle?, accessKeyId, secretAccessKey }')
    return undefined
  }
  for (const key of Object.keys(raw)) if (!S3_KNOWN.has(key)) problem(`s3.${key}`, 'is not a setting of s3')
  const text = (name: string): string => {
    const value = raw[name]
    // A secret's value is never repeated in a problem: only its type is named.
    if (typeof value !== 'string' || value === '') problem(`s3.${name}`, 'must be a non-empty string')
    return value as string
  }
  const region = text('region')
  const accessKeyId = text('accessKeyId')
  const secretAccessKey = text('secretAccessKey')
  const endpoint = raw['endpoint']
  if (endpoint !== undefined && !isHttpUrl(endpoint)) {
    problem('s3.endpoint', 'must be an http:// or https:// URL without credentials, query or fragment')
  }
  const forcePathStyle = raw['forcePathStyle'] ?? endpoint !== undefined
  if (typeof forcePathStyle !== 'boolean') problem('s3.forcePathStyle', 'must be true or false')
  return {
    region,
    accessKeyId,
    secretAccessKey,
    forcePathStyle: forcePathStyle === true,
    ...(typeof endpoint === 'string' ? { endpoint: endpoint.replace(/\/+$/, '') } : {}),
  }
}

function isHttpUrl(value: unknown): boolean {
  if (typeof value !== 'string' || !URL.canParse(value)) return false
  const url = new URL(value)
  return (
    (url.protocol === 'http:' || url.protocol === 'https:') &&
    url.username === '' &&
    url.password === '' &&
    url.search === '' &&
    url.hash === ''
  )
}

/** The secrets in the settings: redacted from logs, never shown by the API or the page. */
export function archiveSecrets(settings: ArchiveSettings): string[] {
  return settings.location.kind === 's3' ? [settings.location.secretAccessKey] : []
}

/** What the endpoints view and the breaker show for the archive: its place, never a secret. */
export function archiveTarget(settings: ArchiveSettings): string {
  const { location } = settings
  if (location.kind === 'file') return pathToFileURL(location.root).href
  return `s3://${location.bucket}${location.prefix === '' ? '' : `/${location.prefix}`}`
}
