/**
 * The known name closest to a misspelt one, for "did you mean …?" hints: the one at the smallest
 * edit distance (insertions, deletions, substitutions and swaps of two neighbours, case ignored),
 * if that distance is small for the name's length; otherwise `undefined`, since a far-fetched
 * suggestion misleads more than none.
 */
export function nearestName(given: string, known: Iterable<string>): string | undefined {
  const wanted = given.toLowerCase()
  // Up to a third of the name may be wrong, and always at least one character.
  const tolerance = Math.max(1, Math.floor(wanted.length / 3))
  let best: string | undefined
  let bestDistance = tolerance + 1
  for (const name of known) {
    const distance = editDistance(wanted, name.toLowerCase())
    if (distance < bestDistance) {
      best = name
      bestDistance = distance
    }
  }
  return best
}

/** `" (did you mean \`name\`?)"`, or `""` when nothing is near enough. */
export function didYouMean(given: string, known: Iterable<string>): string {
  const nearest = nearestName(given, known)
  return nearest === undefined ? '' : ` (did you mean \`${nearest}\`?)`
}

// Optimal string alignment distance: Levenshtein plus adjacent transpositions ("flsuhAt").
function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i])
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j
  for (let i = 1; i <= a.length; i++) {
    const row = rows[i]!
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let d = Math.min(rows[i - 1]![j]! + 1, row[j - 1]! + 1, rows[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1)
      row[j] = d
    }
  }
  return rows[a.length]![b.length]!
}
