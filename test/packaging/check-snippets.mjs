// CI step: every ```ts snippet in README.md and docs/*.md type-checks in strict mode against the
// built package, as a user's TypeScript project would see it (module and resolution node16,
// importing `tracklet`, `tracklet/webhooks` and `tracklet/relay` by name). Run after the build.
import { execFileSync } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../..', import.meta.url))
// Inside the package's own folder, so that `tracklet/…` resolves to it by name (self-reference).
const dir = join(root, '.tmp', 'snippets')
rmSync(dir, { recursive: true, force: true })
mkdirSync(dir, { recursive: true })

const documents = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
]
const files = []
for (const document of documents) {
  const text = readFileSync(join(root, document), 'utf8')
  let index = 0
  for (const match of text.matchAll(/```ts\n([\s\S]*?)```/g)) {
    const line = text.slice(0, match.index).split('\n').length
    const name = `${document.replace(/\W+/g, '_')}_${++index}_line${line}.mts`
    // Each snippet is a module of its own (top-level await allowed, no name clashes).
    writeFileSync(join(dir, name), `${match[1]}\nexport {}\n`)
    files.push(name)
  }
}
writeFileSync(
  join(dir, 'tsconfig.json'),
  JSON.stringify({
    compilerOptions: {
      strict: true,
      noEmit: true,
      target: 'ES2022',
      module: 'node16',
      moduleResolution: 'node16',
      types: ['node'],
      typeRoots: [join(root, 'node_modules/@types')],
      skipLibCheck: false,
    },
    files,
  }),
)
try {
  execFileSync(join(root, 'node_modules/.bin/tsc'), ['-p', dir], { stdio: 'inherit' })
  console.log(`${files.length} snippets from ${documents.length} documents type-check in strict mode`)
} catch {
  console.error(`a snippet does not type-check: the files are in ${dir}, named after document and line`)
  process.exit(1)
}
