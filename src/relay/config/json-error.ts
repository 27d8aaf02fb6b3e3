// Where and why a config file is not JSON, in words that quote none of the file: the parser's
// own reason, without the text around the mistake that V8 quotes (it may be a secret), and the
// line and column of the first character the parser refuses.

/**
 * ` at line L, column C: <the parser's reason>` for `text`, which `JSON.parse` refused with
 * `error`. A trailing comma (which JSON does not allow) is named, at the comma.
 */
export function whereJsonBreaks(text: string, error: unknown): string {
  if (text.trim() === '') return ': the file is empty'
  const reason = reasonOf(error)
  const at = positionOf(error) ?? firstRefused(text)
  if (/^Unexpected end of JSON input$/.test(reason) || at >= text.length) return `: it ends too early (${reason})`
  const comma = trailingComma(text, at)
  if (comma !== undefined) {
    return ` at ${lineAndColumn(text, comma)}: a comma before '${text[at]}' (JSON allows no trailing comma; the parser says: ${reason})`
  }
  return ` at ${lineAndColumn(text, at)}: ${reason}`
}

// The parser's message without where it was (we say that ourselves) and without the text it quotes.
function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  return message
    .replace(/,\s*(?:\.\.\.)?"[\s\S]*is not valid JSON$/, '')
    .replace(/ (?:in JSON )?at position \d+(?: \(line \d+ column \d+\))?$/, '')
    .trim()
}

function positionOf(error: unknown): number | undefined {
  const match = / at position (\d+)/.exec(error instanceof Error ? error.message : '')
  return match === null ? undefined : Number(match[1])
}

// When the parser names no position: the shortest prefix of the text that fails for another
// reason than ending early ends just past the first character refused. (A prefix ending early
// fails at its own end, or with "Unexpected end"; every longer prefix holds the mistake.)
function firstRefused(text: string): number {
  const breaksWithin = (length: number): boolean => {
    try {
      JSON.parse(text.slice(0, length))
      return false
    } catch (error) {
      if (/Unexpected end of JSON input/.test((error as Error).message)) return false
      const at = positionOf(error)
      return at === undefined || at < length
    }
  }
  let low = 1
  let high = text.length
  while (low < high) {
    const middle = Math.floor((low + high) / 2)
    if (breaksWithin(middle)) high = middle
    else low = middle + 1
  }
  return low - 1
}

// The position of a comma just before a closing `}` or `]` at `at` (whitespace between), if any.
function trailingComma(text: string, at: number): number | undefined {
  if (text[at] !== '}' && text[at] !== ']') return undefined
  let before = at - 1
  while (before >= 0 && /\s/.test(text[before]!)) before--
  return text[before] === ',' ? before : undefined
}

function lineAndColumn(text: string, at: number): string {
  const before = text.slice(0, at).split('\n')
  return `line ${before.length}, column ${before.at(-1)!.length + 1}`
}
