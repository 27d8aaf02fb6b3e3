import { RelayError } from '../../errors'

/**
 * Loads a package the archive needs only for some settings (an S3 client, a Parquet writer): an
 * optional peer dependency, so the SDK's install stays small. A missing one is a clear error.
 *
 * @throws {RelayError} `ERR_RELAY_DRIVER_MISSING` naming the package to install.
 */
export async function loadPackage<T>(name: string, purpose: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load()
  } catch (error) {
    const code = (error as { code?: unknown }).code
    if ((code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && String(error).includes(name)) {
      throw new RelayError(
        'ERR_RELAY_DRIVER_MISSING',
        `${purpose} needs the ${name} package, which is not installed: run \`npm install ${name}\``,
        { cause: error },
      )
    }
    throw error
  }
}
