import { missingPeer, type PeerGroup } from '../../peers'

/**
 * Loads a package the archive needs only for some settings (an S3 client, a Parquet writer): an
 * optional peer dependency of `group` (src/relay/peers.ts), so the SDK's install stays small. A
 * dynamic import, so the ES module and CommonJS builds load it alike.
 *
 * @throws {RelayError} `ERR_RELAY_PACKAGE_MISSING` naming the packages to install.
 */
export async function loadPackage<T>(group: PeerGroup, name: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load()
  } catch (error) {
    const code = (error as { code?: unknown }).code
    if ((code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && String(error).includes(name)) {
      throw missingPeer(group, error)
    }
    throw error
  }
}
