import { describe, expect, it } from 'vitest'
import { RelayConfigError } from '../../../src/relay/errors'
import {
  ARCHIVE_DEFAULTS,
  archiveSecrets,
  archiveTarget,
  parseArchiveSettings,
} from '../../../src/relay/destinations/archive/settings'

const PATH = 'sources[0].destinations.Archive'
const S3 = { region: 'eu-west-1', accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'sEcReT/key+1' }

function problemsOf(raw: unknown): Record<string, string> {
  try {
    parseArchiveSettings(raw, PATH)
  } catch (error) {
    expect(error).toBeInstanceOf(RelayConfigError)
    return Object.fromEntries((error as RelayConfigError).problems.map((p) => [p.field, p.message]))
  }
  throw new Error('the settings were accepted')
}

describe('the archive settings', () => {
  it('resolves a folder over the defaults', () => {
    const settings = parseArchiveSettings({ url: 'file:///var/lib/tracklet/archive' }, PATH)
    expect(settings).toEqual({
      location: { kind: 'file', root: '/var/lib/tracklet/archive' },
      ...ARCHIVE_DEFAULTS,
    })
    expect(archiveTarget(settings)).toBe('file:///var/lib/tracklet/archive')
    expect(archiveSecrets(settings)).toEqual([])
  })

  it('resolves a bucket and prefix, path-style by default for an endpoint (MinIO)', () => {
    const settings = parseArchiveSettings(
      { url: 's3://my-bucket/events/raw/', s3: { ...S3, endpoint: 'http://minio:9000/' }, format: 'parquet' },
      PATH,
    )
    expect(settings.location).toEqual({
      kind: 's3',
      bucket: 'my-bucket',
      prefix: 'events/raw',
      endpoint: 'http://minio:9000',
      forcePathStyle: true,
      ...S3,
    })
    expect(settings.format).toBe('parquet')
    expect(archiveTarget(settings)).toBe('s3://my-bucket/events/raw')
    expect(archiveSecrets(settings)).toEqual([S3.secretAccessKey])
    const aws = parseArchiveSettings({ url: 's3://my-bucket', s3: S3 }, PATH)
    expect(aws.location).toMatchObject({ prefix: '', forcePathStyle: false })
    expect(archiveTarget(aws)).toBe('s3://my-bucket')
  })

  it('lists every problem with its path, and never repeats a secret', () => {
    const problems = problemsOf({
      url: 's3://Bad_Bucket/x',
      format: 'csv',
      maxFileMessages: 0,
      maxFileSeconds: 1.5,
      s3: { region: '', accessKeyId: 'id', secretAccessKey: 42, endpoint: 'ftp://x', colour: 'red' },
      extra: true,
    })
    expect(Object.keys(problems).sort()).toEqual(
      [
        `${PATH}.extra`,
        `${PATH}.format`,
        `${PATH}.maxFileMessages`,
        `${PATH}.maxFileSeconds`,
        `${PATH}.url`,
        `${PATH}.s3.colour`,
        `${PATH}.s3.region`,
        `${PATH}.s3.secretAccessKey`,
        `${PATH}.s3.endpoint`,
      ].sort(),
    )
    expect(problems[`${PATH}.format`]).toMatch(/"ndjson" or "parquet", got "csv"/)
    expect(problems[`${PATH}.maxFileMessages`]).toMatch(/from 1 to 1000000, got 0/)
    const secret = problemsOf({ url: 's3://bucket', s3: { ...S3, secretAccessKey: '' }, format: 'x' })
    expect(JSON.stringify(secret)).not.toContain(S3.accessKeyId)
  })

  it('refuses a URL that is neither a folder nor a bucket, and s3 settings for a folder', () => {
    expect(problemsOf({ url: 'https://example.com/archive' })).toEqual({
      [`${PATH}.url`]: 'must be a "file://" folder or "s3://bucket/prefix" URL',
    })
    expect(problemsOf({ url: 'file:///a', s3: S3 })).toHaveProperty(`${PATH}.s3`)
    expect(problemsOf({ url: 's3://bucket' })).toHaveProperty(`${PATH}.s3`)
    expect(problemsOf({ url: 's3://id:pw-4711@bucket', s3: S3 })[`${PATH}.url`]).not.toContain('pw-4711')
    expect(problemsOf('file:///a')).toEqual({ [PATH]: expect.stringContaining('must be an object') })
  })
})
