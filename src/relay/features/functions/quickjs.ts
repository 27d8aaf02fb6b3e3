import { readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { RELAY_PEERS, resolvePeer } from '../../peers'

/** Where QuickJS is installed, and its WebAssembly compiled, for a function's worker thread. */
export interface QuickJs {
  /** `quickjs-emscripten-core`'s entry, resolved here (a worker's cwd could be anywhere). */
  corePath: string
  /** The WebAssembly build's entry (`@jitl/quickjs-wasmfile-release-sync`). */
  variantPath: string
  /** Its WebAssembly, compiled once per process and handed to each worker. */
  wasmModule: WebAssembly.Module
}

let quickJs: Promise<QuickJs> | undefined

/**
 * QuickJS for a function's worker: compiled once in this process, so a worker started later
 * (after a timeout, a reload, another function) neither compiles it again nor optimises its hot
 * code again.
 */
export function loadQuickJs(): Promise<QuickJs> {
  quickJs ??= compile().catch((error: unknown) => {
    // A failure is not kept: the next function to start tries again.
    quickJs = undefined
    throw error
  })
  return quickJs
}

async function compile(): Promise<QuickJs> {
  const corePath = resolvePeer(RELAY_PEERS.functions, 'quickjs-emscripten-core')
  const variantPath = resolvePeer(RELAY_PEERS.functions, '@jitl/quickjs-wasmfile-release-sync')
  // The build's own file, beside its entry (the variant would read and compile it in each worker).
  const bytes = await readFile(join(dirname(variantPath), 'emscripten-module.wasm'))
  return { corePath, variantPath, wasmModule: await wasm.compile(bytes) }
}

// Node's global WebAssembly, whose value this project's type libraries (no DOM) do not declare.
type Compile = (bytes: Uint8Array) => Promise<WebAssembly.Module>
const wasm = (globalThis as unknown as { WebAssembly: { compile: Compile } }).WebAssembly
