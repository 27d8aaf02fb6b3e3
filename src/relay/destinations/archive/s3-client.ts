import { createHash } from 'node:crypto'
import { RELAY_PEERS } from '../../peers'
import { type Dispatcher, request } from 'undici'
import { loadPackage } from './load-package'
import { tagText } from './s3-xml'
import type { S3Location } from './settings'
import { ArchiveStoreError } from './store'

/** One request's limits: an archive file of 100,000 messages is tens of megabytes. */
const TIMEOUT_MS = 120_000

/** A signed request's answer. */
export interface S3Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: Buffer
}

type Signer = typeof import('aws4fetch').AwsV4Signer
let signer: Promise<Signer> | undefined

/** The signer, loaded once, on the first request of an `s3://` archive. */
function loadSigner(): Promise<Signer> {
  signer ??= loadPackage(RELAY_PEERS.s3Archive, 'aws4fetch', async () => (await import('aws4fetch')).AwsV4Signer)
  return signer
}

/**
 * Signed requests (AWS Signature V4, by `aws4fetch`, loaded on first use) to one bucket of an
 * S3-compatible store, sent through an undici `Dispatcher`. Any failure is an
 * {@link ArchiveStoreError}: `unreachable` for no answer, else the status and S3's error code.
 */
export class S3Client {
  readonly #location: S3Location
  readonly #dispatcher: Dispatcher | undefined

  constructor(location: S3Location, dispatcher?: Dispatcher) {
    this.#location = location
    this.#dispatcher = dispatcher
  }

  /** The URL of a key (or of the bucket, for `''`), with a query. */
  url(key: string, query = ''): string {
    const { bucket, region, endpoint, forcePathStyle } = this.#location
    const path = key
      .split('/')
      .map((segment) => encodeURIComponent(segment).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16)}`))
      .join('/')
    const base = new URL(endpoint ?? `https://s3.${region}.amazonaws.com`)
    const basePath = base.pathname.replace(/\/$/, '')
    const root = forcePathStyle
      ? `${base.origin}${basePath}/${bucket}`
      : `${base.protocol}//${bucket}.${base.host}${basePath}`
    return `${root}/${path}${query === '' ? '' : `?${query}`}`
  }

  /**
   * Sends one signed request; resolves on a 2xx answer.
   * @param what The operation and key, for the error's message.
   * @throws {ArchiveStoreError} when there is no answer or it is not a 2xx.
   */
  async send(
    method: string,
    url: string,
    what: string,
    body?: Uint8Array | string,
    headers: Record<string, string> = {},
  ): Promise<S3Answer> {
    const AwsV4Signer = await loadSigner()
    const payload = typeof body === 'string' ? Buffer.from(body) : body
    const signed = await new AwsV4Signer({
      method,
      url,
      headers: {
        ...headers,
        'x-amz-content-sha256': createHash('sha256')
          .update(payload ?? '')
          .digest('hex'),
      },
      accessKeyId: this.#location.accessKeyId,
      secretAccessKey: this.#location.secretAccessKey,
      region: this.#location.region,
      service: 's3',
    }).sign()
    let answer: Dispatcher.ResponseData
    try {
      answer = await request(signed.url, {
        method: method as Dispatcher.HttpMethod,
        headers: Object.fromEntries(signed.headers),
        ...(payload === undefined ? {} : { body: payload }),
        headersTimeout: TIMEOUT_MS,
        bodyTimeout: TIMEOUT_MS,
        ...(this.#dispatcher === undefined ? {} : { dispatcher: this.#dispatcher }),
      })
    } catch (error) {
      const code = (error as { code?: string }).code ?? (error as Error).name
      throw new ArchiveStoreError('unreachable', `${what}: the store is unreachable (${code})`, {
        retryable: true,
        cause: error,
      })
    }
    const data = Buffer.from(await answer.body.arrayBuffer())
    const result = { status: answer.statusCode, headers: answer.headers, body: data }
    // CompleteMultipartUpload may answer 200 with an error in its body.
    const failed = answer.statusCode >= 300 || (method === 'POST' && data.includes('<Error>'))
    if (failed) throw s3Error(result, what)
    return result
  }
}

function s3Error({ status, body }: S3Answer, what: string): ArchiveStoreError {
  const code = tagText(body.toString('utf8'), 'Code')
  const reason = `HTTP ${status}${code === undefined ? '' : ` ${code}`}`
  // A store that refuses (a wrong key, a missing bucket) is retried too: once the operator fixes it
  // within the retry window, nothing is lost.
  return new ArchiveStoreError(reason, `${what}: the store answered ${reason}`, { retryable: true })
}
