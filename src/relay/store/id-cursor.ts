/**
 * The opaque cursor of a page read newest first by id: the page after it starts below the id it
 * names. Each list has its own prefix (`d1.` deliveries, `v1.` violations), so a cursor of one list
 * given to another is refused rather than read as an id.
 */
export interface IdCursor {
  /** The cursor of the page that starts below `id`. */
  encode(id: number): string
  /**
   * The id below which the page of `cursor` starts.
   * @throws {TypeError} when `cursor` was not made by this list's `encode`.
   */
  decode(cursor: string): number
}

/** The {@link IdCursor} of the list whose cursors start with `prefix`. */
export function idCursor(prefix: string): IdCursor {
  return {
    encode: (id) => prefix + Buffer.from(String(id), 'utf8').toString('base64url'),
    decode: (cursor) => {
      const id = cursor.startsWith(prefix)
        ? Number(Buffer.from(cursor.slice(prefix.length), 'base64url').toString('utf8'))
        : Number.NaN
      if (!Number.isSafeInteger(id) || id < 1)
        throw new TypeError(`cursor must be the "next" of a page, got ${JSON.stringify(cursor.slice(0, 40))}`)
      return id
    },
  }
}
