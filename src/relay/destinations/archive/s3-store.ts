import type { Dispatcher } from 'undici'
import { S3Client } from './s3-client'
import { completeBody, parseListing, tagText } from './s3-xml'
import type { S3Location } from './settings'
import { type ArchiveStore, ArchiveStoreError, type FileMeta, type StoredFile } from './store'
import { DATE_FOLDER, parseKey } from './layout'

/** Files above this size go up as a multipart upload in parts of this size (S3's minimum is 5 MiB). */
export const S3_PART_BYTES = 8 * 1024 * 1024

// The file's meta travels as the object's user metadata (S3 keeps it with the object).
const META_HEADERS = {
  messages: 'x-amz-meta-tracklet-messages',
  first: 'x-amz-meta-tracklet-first',
  last: 'x-amz-meta-tracklet-last',
} as const

/**
 * A bucket (and prefix) of Amazon S3 or any S3-compatible store. An object is visible only whole
 * in S3 (a PUT, or a multipart upload once completed), and durable once the store answered.
 */
export class S3Store implements ArchiveStore {
  readonly #client: S3Client
  readonly #partBytes: number

  constructor(location: S3Location, options: { dispatcher?: Dispatcher; partBytes?: number } = {}) {
    this.#client = new S3Client(location, options.dispatcher)
    this.#partBytes = options.partBytes ?? S3_PART_BYTES
  }

  async put(key: string, body: Uint8Array, meta: FileMeta): Promise<void> {
    const headers = {
      [META_HEADERS.messages]: String(meta.messages),
      [META_HEADERS.first]: meta.first,
      [META_HEADERS.last]: meta.last,
    }
    if (body.byteLength <= this.#partBytes) {
      await this.#client.send('PUT', this.#client.url(key), `PUT ${key}`, body, headers)
      return
    }
    await this.#multipart(key, body, headers)
  }

  async #multipart(key: string, body: Uint8Array, headers: Record<string, string>): Promise<void> {
    const created = await this.#client.send('POST', this.#client.url(key, 'uploads='), `upload ${key}`, '', headers)
    const uploadId = tagText(created.body.toString('utf8'), 'UploadId')
    if (uploadId === undefined) {
      throw new ArchiveStoreError('bad answer', `upload ${key}: the store gave no UploadId`, { retryable: true })
    }
    const upload = `uploadId=${encodeURIComponent(uploadId)}`
    try {
      const etags: string[] = []
      for (let offset = 0, part = 1; offset < body.byteLength; offset += this.#partBytes, part++) {
        const chunk = body.subarray(offset, offset + this.#partBytes)
        const url = this.#client.url(key, `partNumber=${part}&${upload}`)
        const answer = await this.#client.send('PUT', url, `upload ${key} part ${part}`, chunk)
        etags.push(String(answer.headers['etag'] ?? ''))
      }
      await this.#client.send('POST', this.#client.url(key, upload), `complete ${key}`, completeBody(etags))
    } catch (error) {
      // An upload never completed is never visible; aborting frees its parts (best effort: the
      // bucket's lifecycle rule for incomplete uploads is the backstop, docs/archive.md).
      await this.#client.send('DELETE', this.#client.url(key, upload), `abort ${key}`).catch(() => undefined)
      throw error
    }
  }

  async earliestDate(sourceFolder: string): Promise<string | undefined> {
    // Keys list in order, and `date=YYYY-MM-DD` orders by day: the first key is of the earliest.
    const query = `list-type=2&max-keys=1&prefix=${encodeURIComponent(`${sourceFolder}/`)}`
    const answer = await this.#client.send('GET', this.#client.url('', query), `list ${sourceFolder}`)
    const [first] = parseListing(answer.body.toString('utf8')).objects
    return first && DATE_FOLDER.exec(first.key.slice(sourceFolder.length + 1).split('/')[0]!)?.[1]
  }

  async list(folder: string): Promise<StoredFile[]> {
    const files: StoredFile[] = []
    for await (const page of this.#pages(`${folder}/`)) {
      for (const object of page.objects) if (parseKey(object.key)) files.push(object)
    }
    return files.sort((a, b) => (a.key < b.key ? -1 : 1))
  }

  /** The pages of a ListObjectsV2 of a prefix. */
  async *#pages(prefix: string): AsyncGenerator<ReturnType<typeof parseListing>> {
    let token: string | undefined
    do {
      const next = token === undefined ? '' : `&continuation-token=${encodeURIComponent(token)}`
      const query = `list-type=2&prefix=${encodeURIComponent(prefix)}${next}`
      const page = parseListing(
        (await this.#client.send('GET', this.#client.url('', query), `list ${prefix}`)).body.toString('utf8'),
      )
      yield page
      token = page.next
    } while (token !== undefined)
  }

  async meta(key: string): Promise<FileMeta | undefined> {
    const { headers } = await this.#client.send('HEAD', this.#client.url(key), `HEAD ${key}`)
    const messages = Number(headers[META_HEADERS.messages])
    const first = headers[META_HEADERS.first]
    const last = headers[META_HEADERS.last]
    if (!Number.isInteger(messages) || typeof first !== 'string' || typeof last !== 'string') return undefined
    return { messages, first, last }
  }

  async read(key: string): Promise<Uint8Array> {
    return (await this.#client.send('GET', this.#client.url(key), `GET ${key}`)).body
  }

  async close(): Promise<void> {}
}
