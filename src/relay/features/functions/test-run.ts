import type { DeliverableMessage } from '../../../shared/message'
import type { FunctionResult } from './result'
import { FunctionCompileError, FunctionSandbox, type FunctionSpec } from './sandbox'
import { consoleLines, errorText, verdictOf } from './step'

/**
 * What a function made of one event in a test run (`POST /v1/functions/test`, `tracklet function
 * test`): the event it would send (`output`), or that it drops it, or the error; its console lines
 * and how long the call ran, ms.
 */
export interface FunctionTestResult {
  input: unknown
  output?: unknown
  dropped?: true
  error?: string
  logs: readonly string[]
  ms: number
}

/**
 * Compiles `spec` in a sandbox of its own and runs it on each of `events` in turn, as a delivery
 * would (the same handlers, limits and outcomes), then ends the sandbox.
 *
 * @throws {FunctionCompileError} when the code does not compile.
 */
export async function testFunction(spec: FunctionSpec, events: readonly unknown[]): Promise<FunctionTestResult[]> {
  const sandbox = await FunctionSandbox.start(spec)
  try {
    const results: FunctionTestResult[] = []
    for (const input of events) results.push(testResult(input, await sandbox.call(input)))
    return results
  } finally {
    await sandbox.close()
  }
}

/**
 * Compiles `spec` in a sandbox of its own, runs nothing, and ends it: what the compiler said
 * (`SyntaxError: …`), or `undefined` when the code compiles.
 */
export async function compileErrorOf(spec: FunctionSpec): Promise<string | undefined> {
  try {
    await (await FunctionSandbox.start(spec)).close()
    return undefined
  } catch (error) {
    if (error instanceof FunctionCompileError) return error.reason
    throw error
  }
}

function testResult(input: unknown, result: FunctionResult): FunctionTestResult {
  const base = { input, logs: consoleLines(result), ms: Math.round(result.ms * 1000) / 1000 }
  if (result.kind === 'error') return { ...base, error: errorText(result) }
  const verdict = verdictOf(result, input as DeliverableMessage)
  switch (verdict.kind) {
    case 'send':
      return { ...base, output: verdict.message }
    case 'filtered':
      return { ...base, dropped: true }
    case 'retry':
    case 'failed':
      return { ...base, error: verdict.error }
  }
}
