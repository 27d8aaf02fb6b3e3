// The few S3 XML documents the archive reads and writes. S3's answers are flat and regular: a
// tag's text is all it needs, so a parser would be more than the job.

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }

/** Text with XML's entities and character references decoded. */
export function xmlText(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#\d+|\w+);/g, (whole, name: string) => {
    if (name.startsWith('#x')) return String.fromCodePoint(Number.parseInt(name.slice(2), 16))
    if (name.startsWith('#')) return String.fromCodePoint(Number(name.slice(1)))
    return ENTITIES[name] ?? whole
  })
}

/** Text escaped for an XML element. */
export function xmlEscape(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&${Object.keys(ENTITIES).find((k) => ENTITIES[k] === char)};`)
}

/** The decoded text of each `<tag>` in `xml`, in order. */
export function tagTexts(xml: string, tag: string): string[] {
  return [...xml.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g'))].map((m) => xmlText(m[1]!))
}

/** The first `<tag>`'s decoded text, or `undefined`. */
export function tagText(xml: string, tag: string): string | undefined {
  return tagTexts(xml, tag)[0]
}

/** A ListObjectsV2 page: its objects and the token of the next page, if any. */
export function parseListing(xml: string): {
  objects: { key: string; bytes: number }[]
  next?: string
} {
  const objects = tagTexts(xml, 'Contents').map((contents) => ({
    key: tagText(contents, 'Key') ?? '',
    bytes: Number(tagText(contents, 'Size') ?? 0),
  }))
  const next = tagText(xml, 'IsTruncated') === 'true' ? tagText(xml, 'NextContinuationToken') : undefined
  return next === undefined ? { objects } : { objects, next }
}

/** The body of CompleteMultipartUpload for the parts' ETags, in part order. */
export function completeBody(etags: readonly string[]): string {
  const parts = etags
    .map((etag, index) => `<Part><PartNumber>${index + 1}</PartNumber><ETag>${xmlEscape(etag)}</ETag></Part>`)
    .join('')
  return `<CompleteMultipartUpload>${parts}</CompleteMultipartUpload>`
}
