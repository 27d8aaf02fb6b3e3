import { createRequire } from 'node:module'
import { RelayError } from './errors'

/**
 * What only a relay uses, as optional peer dependencies of the package (beside the database
 * drivers, `kit/load-driver.ts`): `npm i tracklet` for the SDK alone installs none of them, and
 * a relay loads each only when it needs it. package.json's `peerDependencies` and the README's
 * install lines list the same packages (test/packaging/relay-peers.test.ts).
 */
export const RELAY_PEERS = {
  /** Every relay: `/metrics`, the page's figures and `--workers`' sums. */
  metrics: { needs: 'the relay (its /metrics)', packages: ['prom-client'] },
  /** A source with a tracking plan (JSON Schema draft-07). */
  plans: { needs: 'a tracking plan', packages: ['ajv', 'ajv-formats', 're2js'] },
  /** A destination with a function (the QuickJS sandbox, WebAssembly: nothing native). */
  functions: {
    needs: 'a destination function',
    packages: ['quickjs-emscripten-core', '@jitl/quickjs-wasmfile-release-sync'],
  },
  /** An archive to an S3-compatible store (`s3://`): AWS Signature V4. */
  s3Archive: { needs: 'an "s3://" archive', packages: ['aws4fetch'] },
  /** An archive in Parquet files (`format: "parquet"`), written and read back for replays. */
  parquetArchive: { needs: 'a Parquet archive', packages: ['hyparquet', 'hyparquet-writer'] },
} as const satisfies Record<string, PeerGroup>

/** Packages a relay feature needs together, and what needs them (for the error). */
export interface PeerGroup {
  readonly needs: string
  readonly packages: readonly string[]
}

// The CommonJS build has __filename; the ES module build (and the sources) have import.meta.url.
const require = createRequire(typeof __filename === 'string' ? __filename : import.meta.url)

/**
 * Loads `name`, one of `group`'s packages, from where this module is installed.
 *
 * @throws {RelayError} `ERR_RELAY_PACKAGE_MISSING` naming the packages to install.
 */
export function requirePeer<T>(group: PeerGroup, name: string): T {
  return fromPeer(group, name, () => require(name) as T)
}

/** Where `name`, one of `group`'s packages, is installed (for a worker thread to load it). */
export function resolvePeer(group: PeerGroup, name: string): string {
  return fromPeer(group, name, () => require.resolve(name))
}

function fromPeer<T>(group: PeerGroup, name: string, load: () => T): T {
  try {
    return load()
  } catch (error) {
    // The package itself missing; not one of its files or dependencies (that is a broken install).
    const { code, message } = error as { code?: unknown; message?: unknown }
    const itself = String(message).startsWith(`Cannot find module '${name}'`)
    if (code !== 'MODULE_NOT_FOUND' || !itself) throw error
    throw missingPeer(group, error)
  }
}

/** The error for a relay feature whose packages are not installed: what to run. */
export function missingPeer(group: PeerGroup, cause?: unknown): RelayError {
  const packages = group.packages
  const one = packages.length === 1
  const named = one ? `the ${packages[0]} package` : `the ${packages.join(' and ')} packages`
  return new RelayError(
    'ERR_RELAY_PACKAGE_MISSING',
    `${group.needs} needs ${named}, which ${one ? 'is' : 'are'} not installed: ` +
      `run \`npm install ${packages.join(' ')}\``,
    cause === undefined ? undefined : { cause },
  )
}
