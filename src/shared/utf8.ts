// Node's (and Bun's, and Deno's npm scope's) Buffer counts UTF-8 bytes natively; a runtime without
// it (Cloudflare Workers, Vercel Edge) counts in JavaScript. Read from the global, never imported,
// so the fetch build of the SDK imports no `node:` module.
const nodeBuffer = (globalThis as { Buffer?: { byteLength(text: string, encoding: 'utf8'): number } }).Buffer

/** The UTF-8 length of `text` in bytes (a lone surrogate counts 3, as its replacement character). */
export const utf8Length: (text: string) => number =
  nodeBuffer === undefined ? countUtf8Bytes : (text) => nodeBuffer.byteLength(text, 'utf8')

/** {@link utf8Length} in plain JavaScript, for runtimes without Node's `Buffer`. */
export function countUtf8Bytes(text: string): number {
  let bytes = text.length
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x80) continue
    if (code < 0x800) bytes += 1
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1)
      // A surrogate pair: two UTF-16 units, four UTF-8 bytes.
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 2
        i++
      } else bytes += 2
    } else bytes += 2
  }
  return bytes
}
