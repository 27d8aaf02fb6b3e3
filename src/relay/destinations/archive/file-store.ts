import { randomBytes } from 'node:crypto'
import * as fs from 'node:fs/promises'
import { basename, dirname, join, relative, sep } from 'node:path'
import { DATE_FOLDER, parseKey, temporaryName } from './layout'
import { type ArchiveStore, ArchiveStoreError, type FileMeta, type StoredFile } from './store'

/** The file-system calls the store makes that can fail for want of room; injectable for tests. */
export interface FileSystem {
  open: typeof fs.open
}

// Why each errno fails: a full disk or quota is the operator's to fix, then retried like a down store.
const REASONS: Record<string, string> = {
  ENOSPC: 'disk full',
  EDQUOT: 'disk quota exceeded',
  EROFS: 'read-only file system',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EIO: 'I/O error',
}

/** The name of the hidden file beside an archive file that holds its {@link FileMeta}. */
export function metaName(name: string): string {
  return `.${name}.meta.json`
}

/**
 * A local folder. A file is written under a hidden temporary name, fsync'd, then renamed, and its
 * folder fsync'd: it is durable and whole when `put` resolves, and never seen half written. Its
 * meta is written beside it, hidden, before the rename.
 */
export class FileStore implements ArchiveStore {
  /** The folder's absolute path. */
  readonly #root: string
  readonly #fs: FileSystem

  constructor(root: string, options: { fs?: FileSystem } = {}) {
    this.#root = root
    this.#fs = options.fs ?? fs
  }

  async put(key: string, body: Uint8Array, meta: FileMeta): Promise<void> {
    const path = join(this.#root, ...key.split('/'))
    const folder = dirname(path)
    const name = basename(path)
    const nonce = randomBytes(6).toString('hex')
    const temp = join(folder, temporaryName(name, nonce))
    const metaTemp = join(folder, temporaryName(metaName(name), nonce))
    try {
      const created = await fs.mkdir(folder, { recursive: true })
      await this.#writeSynced(metaTemp, Buffer.from(JSON.stringify(meta)))
      await fs.rename(metaTemp, join(folder, metaName(name)))
      await this.#writeSynced(temp, body)
      await fs.rename(temp, path)
      // The rename is durable once its folder is, and a folder just made once its parents are.
      await syncFolders(folder, created === undefined ? folder : dirname(created))
    } catch (error) {
      await Promise.all([fs.rm(temp, { force: true }), fs.rm(metaTemp, { force: true })])
      throw storeError(error, key)
    }
  }

  async #writeSynced(path: string, body: Uint8Array): Promise<void> {
    const handle = await this.#fs.open(path, 'wx')
    try {
      await handle.writeFile(body)
      await handle.sync()
    } finally {
      await handle.close()
    }
  }

  async earliestDate(sourceFolder: string): Promise<string | undefined> {
    try {
      const entries = await fs.readdir(join(this.#root, ...sourceFolder.split('/')), { withFileTypes: true })
      const dates = entries.map((entry) => DATE_FOLDER.exec(entry.isDirectory() ? entry.name : '')?.[1])
      return dates.filter((date) => date !== undefined).sort()[0]
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw storeError(error, sourceFolder)
    }
  }

  async list(folder: string): Promise<StoredFile[]> {
    const base = join(this.#root, ...folder.split('/'))
    let entries: import('node:fs').Dirent[]
    try {
      entries = await fs.readdir(base, { recursive: true, withFileTypes: true })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
      throw storeError(error, folder)
    }
    const files: StoredFile[] = []
    for (const entry of entries) {
      if (!entry.isFile() || entry.name.startsWith('.')) continue
      const path = join(entry.parentPath ?? (entry as unknown as { path: string }).path, entry.name)
      const key = relative(this.#root, path).split(sep).join('/')
      if (parseKey(key) === undefined) continue
      const { size } = await fs.stat(path)
      files.push({ key, bytes: size })
    }
    return files.sort((a, b) => (a.key < b.key ? -1 : 1))
  }

  async meta(key: string): Promise<FileMeta | undefined> {
    const path = join(this.#root, ...key.split('/'))
    try {
      return JSON.parse(await fs.readFile(join(dirname(path), metaName(basename(path))), 'utf8')) as FileMeta
    } catch {
      return undefined
    }
  }

  async read(key: string): Promise<Uint8Array> {
    try {
      return await fs.readFile(join(this.#root, ...key.split('/')))
    } catch (error) {
      throw storeError(error, key)
    }
  }

  async close(): Promise<void> {}
}

async function syncFolders(from: string, to: string): Promise<void> {
  for (let folder = from; ; folder = dirname(folder)) {
    const handle = await fs.open(folder, 'r')
    try {
      await handle.sync()
    } finally {
      await handle.close()
    }
    if (folder === to || dirname(folder) === folder) return
  }
}

function storeError(error: unknown, key: string): ArchiveStoreError {
  const code = (error as NodeJS.ErrnoException).code ?? ''
  const reason = REASONS[code] ?? (code || 'failed')
  return new ArchiveStoreError(reason, `archive file ${key}: ${reason} (${code || String(error)})`, {
    retryable: true,
    cause: error,
  })
}
