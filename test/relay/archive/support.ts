import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import type { OutboundMessage } from '../../../src/relay/destinations/archive/types'

/** A tracked message as the relay hands it to the archive: outbox id `id`, received at `receivedAt`. */
export function outbound(id: number, receivedAt: string, extra: Record<string, unknown> = {}): OutboundMessage {
  return {
    deliveryId: id,
    source: 'web',
    receivedAt,
    message: {
      type: 'track',
      messageId: `m-${id}`,
      timestamp: receivedAt,
      userId: `u-${id % 3}`,
      event: 'Order Completed',
      properties: { revenue: id },
      ...extra,
    },
  }
}

/** A fresh folder under the system's temporary one, and its removal. */
export async function tempFolder(): Promise<{ path: string; remove: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), 'tracklet-archive-'))
  return { path, remove: () => rm(path, { recursive: true, force: true }) }
}

/** The credentials s3rver accepts (its documented defaults), never a real secret. */
export const S3RVER_KEYS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }

/**
 * An S3-compatible server (s3rver, from npm: Debian packages none) on a free port with one
 * bucket, in a child process, and how to stop it.
 */
export async function startS3(bucket = 'archive'): Promise<{ endpoint: string; stop: () => Promise<void> }> {
  const folder = await tempFolder()
  const script = fileURLToPath(new URL('s3-server.mjs', import.meta.url))
  const child = spawn(process.execPath, ['--openssl-legacy-provider', script, folder.path, bucket], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string]
  return {
    endpoint: `http://127.0.0.1:${Number(line)}`,
    stop: async () => {
      child.kill('SIGKILL')
      if (child.exitCode === null && child.signalCode === null) await once(child, 'exit')
      await folder.remove()
    },
  }
}

/**
 * The archive's module bundled from src/ into a file a child process can import (its packages
 * left external, found from the repository's node_modules): for tests that kill a writer.
 */
export async function bundleArchive(): Promise<string> {
  const root = fileURLToPath(new URL('../../..', import.meta.url))
  const outfile = join(root, 'node_modules', '.cache', 'tracklet-tests', `archive-${process.pid}.mjs`)
  await build({
    stdin: {
      contents: "export { Archive } from './src/relay/destinations/archive/module'",
      resolveDir: root,
      loader: 'ts',
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    outfile,
    logLevel: 'error',
  })
  return outfile
}
