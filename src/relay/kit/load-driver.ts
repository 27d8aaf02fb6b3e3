import { RelayError } from '../errors'

/**
 * Loads a store's database driver, an optional peer dependency, only when that store is opened:
 * `npm i tracklet` for the SDK alone installs (and compiles) neither. A missing driver is a clear
 * error naming the package to install.
 *
 * @throws {RelayError} `ERR_RELAY_DRIVER_MISSING` when the package is not installed.
 */
export async function loadDriver<T>(packageName: string, store: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load()
  } catch (error) {
    const code = (error as { code?: unknown }).code
    if ((code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && String(error).includes(packageName)) {
      throw new RelayError(
        'ERR_RELAY_DRIVER_MISSING',
        `the ${store} store needs the ${packageName} package, which is not installed: run \`npm install ${packageName}\``,
        { cause: error },
      )
    }
    throw error
  }
}
