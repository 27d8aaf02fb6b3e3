/** The library's name and version, as sent in `context.library` and `User-Agent`. */
export const LIBRARY_NAME = 'tracklet'
/** Kept equal to package.json's version (a test checks it). */
export const LIBRARY_VERSION = '0.1.0'
