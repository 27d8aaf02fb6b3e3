/**
 * The code of a function's worker thread, as CommonJS source for `new Worker(…, { eval: true })`:
 * the same text runs from the built package and from the TypeScript sources under the test runner,
 * with no loader and no extra Node flag. It loads QuickJS (WebAssembly) from the paths in
 * `workerData`, compiles the function once, and answers each call with the sandbox's JSON reply.
 *
 * A call that times out or runs out of memory leaves the interpreter in a state not worth trusting:
 * the worker answers, then exits, and the relay starts a fresh one for the next call.
 */
export const WORKER_SOURCE = `'use strict'
const { parentPort, workerData } = require('node:worker_threads')
const { createHash, createHmac } = require('node:crypto')
const core = require(workerData.corePath)
const variant = require(workerData.variantPath)
const { code, filename, prelude, settings, timeoutMs, memoryBytes, stackBytes, replyChars } = workerData

// WebAssembly's page, and the memory the prebuilt module starts with (its INITIAL_MEMORY, 16 MB).
const PAGE = 65536
const BASE_PAGES = 256
let deadline = Infinity
function define(context, name, fn) {
  const handle = context.newFunction(name, fn)
  context.setProp(context.global, name, handle)
  handle.dispose()
}
// What the relay reads out of the sandbox is bounded here, before it is copied: an error's text
// and a reply of at most replyChars characters (the relay cuts each part to its own cap after).
function errorText(context, handle) {
  const dumped = context.dump(handle)
  handle.dispose()
  const cut = (text) => (text === undefined ? undefined : String(text).slice(0, replyChars))
  if (dumped !== null && typeof dumped === 'object') return { message: cut(dumped.message ?? dumped), name: cut(dumped.name), stack: cut(dumped.stack) }
  return { message: cut(dumped) }
}
// A string handle's text, or undefined when it is longer than replyChars (then never copied out).
function boundedString(context, handle) {
  const length = context.getProp(handle, 'length')
  const chars = context.getNumber(length)
  length.dispose()
  return chars > replyChars ? undefined : context.getString(handle)
}
function tooLong() {
  return { kind: 'error', message: 'the function answered more than the relay reads (' + replyChars + ' characters of event and console lines)' }
}

async function main() {
  // The module's memory is made here, with a maximum: the interpreter's own 16 MB and the
  // function's memoryBytes. QuickJS's own limit bounds each allocation, not their sum (its malloc
  // reports no usable size: quickjs-emscripten #271), and an interrupt handler is not polled while
  // one statement allocates (a loop of typed arrays grew this memory to 2 GB); the maximum holds
  // whatever the code does: malloc fails, and the call ends out of memory. WebAssembly memory never
  // shrinks, so that worker is then ended.
  const maximumPages = BASE_PAGES + Math.ceil(memoryBytes / PAGE)
  const wasmMemory = new WebAssembly.Memory({ initial: BASE_PAGES, maximum: maximumPages })
  const module = await core.newQuickJSWASMModuleFromVariant(core.newVariant(variant.default ?? variant, { wasmMemory }))
  const runtime = module.newRuntime()
  runtime.setMemoryLimit(memoryBytes)
  runtime.setMaxStackSize(stackBytes)
  // Spent: grown to within a few pages of its maximum, where an allocation fails. A call that fails
  // there failed for want of memory, whatever it threw (QuickJS throws null when it cannot even
  // make the error).
  const spent = () => wasmMemory.buffer.byteLength > (maximumPages - 16) * PAGE
  runtime.setInterruptHandler(() => Date.now() > deadline)
  const context = runtime.newContext()
  define(context, '__hostSha256', (text) => context.newString(createHash('sha256').update(context.getString(text)).digest('hex')))
  define(context, '__hostHmac', (key, text) =>
    context.newString(createHmac('sha256', context.getString(key)).update(context.getString(text)).digest('hex')))
  define(context, '__hostUrl', (href, base) => {
    let url
    try { url = new URL(context.getString(href), base === undefined || context.typeof(base) === 'undefined' ? undefined : context.getString(base)) } catch { return context.undefined }
    const { protocol, username, password, host, hostname, port, origin, pathname, search, hash } = url
    const slashes = url.href.startsWith(protocol + '//')
    return context.newString(JSON.stringify({ protocol, username, password, host, hostname, port, origin, pathname, search, hash, slashes }))
  })
  const setup = context.evalCode(prelude, 'tracklet-prelude.js')
  if (setup.error) throw new Error('the sandbox prelude failed: ' + errorText(context, setup.error).message)
  setup.value.dispose()
  deadline = Date.now() + timeoutMs
  const compiled = context.evalCode(code, filename)
  const timedOut = Date.now() > deadline
  deadline = Infinity
  if (compiled.error) {
    const error = errorText(context, compiled.error)
    parentPort.postMessage({ type: 'compile-error', message: timedOut ? 'the code ran past functionTimeout while loading' : (error.name ? error.name + ': ' : '') + error.message })
    return
  }
  compiled.value.dispose()
  const call = context.getProp(context.global, '__trackletCall')
  const logsOf = context.getProp(context.global, '__trackletLogs')
  // The lines logged before a call that ended outside the sandbox's own catch (interrupted, out of memory).
  const logsSoFar = () => {
    try {
      const got = context.callFunction(logsOf, context.undefined)
      if (got.error) { got.error.dispose(); return { logs: [], logsTruncated: false } }
      const text = boundedString(context, got.value)
      got.value.dispose()
      return text === undefined ? { logs: [], logsTruncated: true } : JSON.parse(text)
    } catch { return { logs: [], logsTruncated: false } }
  }
  // The settings' JSON, one string for the worker's life: each call parses its own copy from it.
  const settingsHandle = context.newString(settings)
  parentPort.postMessage({ type: 'ready' })

  // A batch of calls, run in order, answered in one message (one round trip per batch, not per call).
  // A call that leaves the interpreter unsafe ends the batch there: the rest go to a fresh worker.
  parentPort.on('message', ({ calls }) => {
    const replies = []
    for (const { id, event } of calls) {
      const answer = runOne(id, event)
      replies.push(answer)
      if (answer.fatal) break
    }
    parentPort.postMessage(replies)
    if (replies[replies.length - 1].fatal) process.exit(0)
  })

  // A reply is its JSON, then, for an event sent on, a newline and the event's own JSON: the event
  // is encoded once (not escaped inside the reply) and parsed once, by the relay.
  function parseReply(text) {
    const cut = text.indexOf('\\n')
    if (cut < 0) return JSON.parse(text)
    const reply = JSON.parse(text.slice(0, cut))
    reply.json = text.slice(cut + 1)
    return reply
  }

  function runOne(id, event) {
    const started = performance.now()
    const eventHandle = context.newString(event)
    deadline = Date.now() + timeoutMs
    let reply
    let fatal = false
    try {
      const result = context.callFunction(call, context.undefined, eventHandle, settingsHandle)
      if (result.error) {
        reply = { kind: 'error', ...errorText(context, result.error) }
      } else if (context.typeof(result.value) === 'string') {
        const text = boundedString(context, result.value)
        reply = text === undefined ? tooLong() : parseReply(text)
        result.value.dispose()
      } else {
        const jobs = runtime.executePendingJobs()
        if (jobs.error) reply = { kind: 'error', ...errorText(context, jobs.error) }
        const state = context.getPromiseState(result.value)
        result.value.dispose()
        if (reply !== undefined) {
          // set above
        } else if (state.type === 'fulfilled') {
          const text = boundedString(context, state.value)
          reply = text === undefined ? tooLong() : parseReply(text)
          state.value.dispose()
        } else if (state.type === 'rejected') {
          reply = { kind: 'error', ...errorText(context, state.error) }
        } else {
          reply = { kind: 'error', message: 'the function returned a promise that never settles (a function has no timers or I/O to wait for)' }
        }
      }
    } catch (error) {
      // The interpreter itself failed (its memory spent mid-call): only a fresh worker is safe.
      reply = { kind: 'error', code: 'memory', message: String(error && error.message) }
      fatal = true
    }
    const overran = Date.now() > deadline
    deadline = Infinity
    if (reply.logs === undefined) Object.assign(reply, fatal ? { logs: [], logsTruncated: false } : logsSoFar())
    eventHandle.alive && eventHandle.dispose()
    if (overran) { reply = { kind: 'error', code: 'timeout', message: 'interrupted', logs: reply.logs, logsTruncated: reply.logsTruncated }; fatal = true }
    else if (reply.kind === 'error' && spent()) { reply = { kind: 'error', code: 'memory', message: 'out of memory', logs: reply.logs, logsTruncated: reply.logsTruncated }; fatal = true }
    else if (reply.kind === 'error' && (reply.code === 'memory' || /out of memory/.test(reply.message))) { reply.code = 'memory'; fatal = true }
    return { id, reply, ms: performance.now() - started, fatal }
  }
}
main().catch((error) => parentPort.postMessage({ type: 'failed', message: String(error && error.stack || error) }))
`
