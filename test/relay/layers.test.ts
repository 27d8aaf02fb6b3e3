import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

// The relay's layout (docs/architecture.md): features above areas by who uses them, on layers
// beneath them, each layer on the ones before it in this list (kit at the bottom).
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const SRC = join(ROOT, 'src')
const AREAS = ['ingest', 'delivery', 'console', 'telemetry']
const LAYERS = ['kit', 'http', 'net', 'destinations', 'config', 'store', 'events', 'sources']

/** Every TypeScript file under `src/`, by its path from the repository root. */
function sourceFiles(folder = SRC): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name)
    if (statSync(path).isDirectory()) return sourceFiles(path)
    return path.endsWith('.ts') ? [relative(ROOT, path)] : []
  })
}

/** The files `file` imports (type imports and re-exports included), resolved to paths from the root. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8')
  const specifiers = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.{1,2}\/[^'"]+)['"]/g)].map((m) => m[1]!)
  return specifiers.map((specifier) => {
    const base = normalize(join(dirname(file), specifier)).replace(/\.(js|ts)$/, '')
    const found = [`${base}.ts`, join(base, 'index.ts')].find((candidate) => existsSync(join(ROOT, candidate)))
    if (found === undefined) throw new Error(`${file} imports ${specifier}, which is no file`)
    return found
  })
}

const FILES = sourceFiles()
const GRAPH = new Map(FILES.map((file) => [file, importsOf(file)]))

/** The relay folder (`ingest`, `store`, …) of a file under `src/relay/`, or `''` for one at its top. */
function folderOf(file: string): string | undefined {
  const parts = file.split('/')
  if (parts[0] !== 'src' || parts[1] !== 'relay') return undefined
  return parts.length > 3 ? parts[2]! : ''
}

describe('the layout of src/', () => {
  it('finds the imports it checks (the checks below see the real graph)', () => {
    expect(GRAPH.get('src/relay/relay.ts')).toContain('src/relay/ingest/area.ts')
    expect(GRAPH.get('src/relay/ingest/area.ts')).toContain('src/relay/store/store.ts')
  })

  it('has no import cycle, type imports included', () => {
    const cycles: string[] = []
    const state = new Map<string, 'open' | 'done'>()
    const visit = (file: string, path: string[]): void => {
      if (state.get(file) === 'done') return
      if (state.get(file) === 'open') {
        cycles.push([...path.slice(path.indexOf(file)), file].join(' → '))
        return
      }
      state.set(file, 'open')
      for (const imported of GRAPH.get(file) ?? []) visit(imported, [...path, file])
      state.set(file, 'done')
    }
    for (const file of FILES) visit(file, [])
    expect(cycles).toEqual([])
  })

  it('keeps each area of the relay out of the others', () => {
    const crossings = FILES.flatMap((file) => {
      const from = folderOf(file)
      if (from === undefined || !AREAS.includes(from)) return []
      return GRAPH.get(file)!
        .filter((imported) => {
          const to = folderOf(imported)
          return to !== undefined && AREAS.includes(to) && to !== from
        })
        .map((imported) => `${file} → ${imported}`)
    })
    expect(crossings).toEqual([])
  })

  it('never has a layer beneath the areas, nor a shared file of the relay, import an area or relay.ts', () => {
    const upward = FILES.flatMap((file) => {
      const from = folderOf(file)
      const beneath =
        from !== undefined && (LAYERS.includes(from) || (from === '' && !/\/(relay|index)\.ts$/.test(file)))
      if (!beneath) return []
      return GRAPH.get(file)!
        .filter((imported) => {
          const to = folderOf(imported)
          return (to !== undefined && AREAS.includes(to)) || /^src\/relay\/(relay|index)\.ts$/.test(imported)
        })
        .map((imported) => `${file} → ${imported}`)
    })
    expect(upward).toEqual([])
  })

  it('gives each area one entry, area.ts, exporting its create function', () => {
    for (const area of AREAS) {
      const entry = readFileSync(join(SRC, 'relay', area, 'area.ts'), 'utf8')
      const name = `create${area[0]!.toUpperCase()}${area.slice(1)}`
      expect(entry, area).toMatch(new RegExp(`export (async )?function ${name}\\(`))
    }
  })

  it('keeps every line of relay.ts, the list of the composition, to 100 characters', () => {
    const long = readFileSync(join(SRC, 'relay', 'relay.ts'), 'utf8')
      .split('\n')
      .filter((line) => line.length > 100)
    expect(long).toEqual([])
  })

  it('keeps every file under 400 lines', () => {
    const lines = (file: string) => readFileSync(join(ROOT, file), 'utf8').split('\n').length - 1
    expect(FILES.filter((file) => lines(file) > 400)).toEqual([])
  })

  it('sets features above the areas: no area or layer imports a feature', () => {
    const downward = FILES.flatMap((file) => {
      const from = folderOf(file)
      if (from === undefined || from === 'features' || /^src\/relay\/(relay|index)\.ts$/.test(file)) return []
      return GRAPH.get(file)!
        .filter((imported) => folderOf(imported) === 'features')
        .map((imported) => `${file} → ${imported}`)
    })
    expect(downward).toEqual([])
  })

  it('keeps the layers in their order: a layer imports only the layers listed before it', () => {
    const upward = FILES.flatMap((file) => {
      const from = LAYERS.indexOf(folderOf(file) ?? '')
      if (from < 0) return []
      return GRAPH.get(file)!
        .filter((imported) => {
          const to = folderOf(imported) ?? ''
          return to !== '' && to !== LAYERS[from] && !LAYERS.slice(0, from).includes(to)
        })
        .map((imported) => `${file} → ${imported}`)
    })
    expect(upward).toEqual([])
  })

  it('knows every folder of the relay: a layer, an area, or the features', () => {
    const folders = new Set(FILES.map(folderOf).filter((f) => f !== undefined && f !== ''))
    expect([...folders].filter((f) => ![...LAYERS, ...AREAS, 'features'].includes(f!))).toEqual([])
  })
})
