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
// A string handle's text, or undefined when it is longer than bound (then never copied out).
function boundedString(context, handle, bound) {
  const length = context.getProp(handle, 'length')
  const chars = context.getNumber(length)
  length.dispose()
  return chars > bound ? undefined : context.getString(handle)
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
  // The WebAssembly the relay compiled once (see quickjs.ts), with this worker's own memory.
  const wasmModule = workerData.wasmModule
  const module = await core.newQuickJSWASMModuleFromVariant(core.newVariant(variant.default ?? variant, { wasmMemory, wasmModule }))
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
  // The prelude's entries, taken before the function's code runs (and never on the global object).
  const batchOf = context.getProp(setup.value, 'batch')
  const resume = context.getProp(setup.value, 'resume')
  const takeOf = context.getProp(setup.value, 'take')
  const logsOf = context.getProp(setup.value, 'logs')
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
  // A string the prelude answers (its function takes no argument), or undefined if it failed.
  const ask = (fn, bound) => {
    try {
      const got = context.callFunction(fn, context.undefined)
      if (got.error) { got.error.dispose(); return undefined }
      const text = context.typeof(got.value) === 'string' ? boundedString(context, got.value, bound) : undefined
      got.value.dispose()
      return text
    } catch { return undefined }
  }
  // The lines logged before a call that ended outside the sandbox's own catch (interrupted, out
  // of memory).
  const logsSoFar = () => {
    const text = ask(logsOf, replyChars)
    if (text === undefined) return { logs: [], logsTruncated: true }
    try { return JSON.parse(text) } catch { return { logs: [], logsTruncated: true } }
  }
  // The settings' JSON, one string for the worker's life: each call parses its own copy from it.
  const settingsHandle = context.newString(settings)
  // Where the prelude says since when the call running has run (see the prelude's runBatch).
  const progress = context.newObject()
  const progressOf = (name) => {
    const handle = context.getProp(progress, name)
    const value = context.getNumber(handle)
    handle.dispose()
    return value
  }
  let crossing = false
  let crossingStarted = 0
  // The start of the call running as last read: calls start in order, so while that one's limit is
  // not reached, the running call's is not either, and the handler reads nothing from the sandbox.
  let known = 0
  runtime.setInterruptHandler(() => {
    if (!crossing) return Date.now() > deadline
    const now = Date.now()
    if (now <= known + timeoutMs) return false
    const started = progressOf('t')
    known = Number.isFinite(started) ? started : crossingStarted
    return now > known + timeoutMs
  })
  parentPort.postMessage({ type: 'ready' })

  // A batch of calls (their events' JSON array), answered in one message: one round trip between
  // threads and, unless a call fails, one crossing into the sandbox per batch. A call that leaves
  // the interpreter unsafe ends the batch there: the rest go to a fresh worker.
  parentPort.on('message', ({ events, count }) => {
    const texts = []
    const ms = []
    let fatal = false
    let first = true
    while (texts.length < count && !fatal) {
      fatal = cross(first ? events : undefined, count - texts.length, texts, ms)
      first = false
    }
    parentPort.postMessage({ texts, ms, fatal })
    if (fatal) process.exit(0)
  })

  function lost() {
    return { kind: 'error', message: "the sandbox lost this call's reply" }
  }

  function neverSettles() {
    return { kind: 'error', message: 'the function returned a promise that never settles (a function has no timers or I/O to wait for)' }
  }

  // One crossing: the batch's events (the first) or the calls after where the last one stopped.
  // Adds the replies it got to texts and ms (each call's own whole ms, plus an even share of the
  // rest of the crossing's time); true when the interpreter is no longer safe.
  function cross(events, remaining, texts, ms) {
    const started = performance.now()
    crossingStarted = Date.now()
    known = crossingStarted
    crossing = true
    const eventsHandle = events === undefined ? undefined : context.newString(events)
    let joined
    let failure
    let fatal = false
    try {
      const result = eventsHandle === undefined
        ? context.callFunction(resume, context.undefined)
        : context.callFunction(batchOf, context.undefined, eventsHandle, settingsHandle, progress)
      if (result.error) failure = { kind: 'error', ...errorText(context, result.error) }
      else if (context.typeof(result.value) === 'string') {
        joined = boundedString(context, result.value, replyChars * remaining)
        result.value.dispose()
      } else {
        const jobs = runtime.executePendingJobs()
        if (jobs.error) failure = { kind: 'error', ...errorText(context, jobs.error) }
        const state = context.getPromiseState(result.value)
        result.value.dispose()
        if (failure !== undefined) {
          // set above
        } else if (state.type === 'fulfilled') {
          joined = context.typeof(state.value) === 'string' ? boundedString(context, state.value, replyChars * remaining) : undefined
          state.value.dispose()
        } else if (state.type === 'rejected') {
          failure = { kind: 'error', ...errorText(context, state.error) }
        } else {
          failure = neverSettles()
        }
      }
    } catch (error) {
      // The interpreter itself failed (its memory spent mid-call): only a fresh worker is safe.
      failure = { kind: 'error', code: 'memory', message: String(error && error.message) }
      fatal = true
    }
    crossing = false
    eventsHandle?.alive && eventsHandle.dispose()
    // Where the crossing ended outside the prelude's catch, the replies before the call it ended
    // in. Not read, they are lost: the worker ends (the calls not answered run on a fresh one).
    if (joined === undefined) joined = ask(takeOf, replyChars * remaining)
    if (joined === undefined) {
      joined = ''
      fatal = true
      failure ??= lost()
    }
    // Each call's whole ms, then its reply.
    const pieces = joined === '' ? [] : joined.split('\\u0001')
    const elapsed = performance.now() - started
    let own = 0
    const got = []
    for (let i = 0; i + 1 < pieces.length && got.length < remaining; i += 2) {
      const whole = Number(pieces[i]) || 0
      own += whole
      got.push({ text: pieces[i + 1], whole })
    }
    const share = failure === undefined && got.length > 0 ? Math.max(0, elapsed - own) / got.length : 0
    for (let i = 0; i < got.length; i++) {
      const { text, whole } = got[i]
      // A call past functionTimeout that the interrupt could not stop: it timed out all the same.
      if (whole > timeoutMs) {
        texts.push(timeoutReply(parseReply(text)))
        ms.push(whole)
        return true
      }
      if (i === got.length - 1 && text.startsWith('{"kind":"error"') && failure === undefined) {
        const checked = checkError(parseReply(text), text)
        texts.push(checked.text)
        ms.push(whole + share)
        if (checked.fatal) return true
        continue
      }
      texts.push(text)
      ms.push(whole + share)
    }
    // A crossing always answers its first call, so the batch always moves on.
    if (got.length === 0 && failure === undefined) {
      failure = lost()
      fatal = true
    }
    if (failure === undefined) return false
    // The call the crossing ended in gets the failure; those after it cross again (or, when the
    // interpreter is unsafe, go to a fresh worker).
    const since = fatal ? NaN : safe(() => progressOf('t'))
    const whole = Math.max(0, Date.now() - (Number.isFinite(since) ? since : crossingStarted))
    ms.push(Math.max(whole, elapsed - own))
    const reply = Object.assign(failure, fatal ? { logs: [], logsTruncated: false } : logsSoFar())
    if (whole > timeoutMs) {
      texts.push(timeoutReply(reply))
      return true
    }
    const checked = fatal ? { text: JSON.stringify(reply), fatal } : checkError(reply, JSON.stringify(reply))
    texts.push(checked.text)
    return checked.fatal
  }

  function safe(read) {
    try { return read() } catch { return NaN }
  }

  function timeoutReply(reply) {
    return JSON.stringify({ kind: 'error', code: 'timeout', message: 'interrupted', logs: reply.logs, logsTruncated: reply.logsTruncated })
  }

  // A failed call with the memory spent failed for want of memory, whatever it threw: only a fresh
  // worker is safe after it. text is the reply as it goes to the relay.
  function checkError(reply, text) {
    const { logs, logsTruncated } = reply
    if (spent()) {
      return { text: JSON.stringify({ kind: 'error', code: 'memory', message: 'out of memory', logs, logsTruncated }), fatal: true }
    }
    if (reply.code === 'memory' || /out of memory/.test(reply.message)) {
      return { text: JSON.stringify({ ...reply, code: 'memory' }), fatal: true }
    }
    return { text, fatal: false }
  }

  // A reply is its JSON, then, for an event sent on, a newline and the event's own JSON.
  function parseReply(text) {
    const cut = text.indexOf('\\n')
    try { return JSON.parse(cut < 0 ? text : text.slice(0, cut)) } catch { return { kind: 'error', message: 'the sandbox answered a reply the relay cannot read' } }
  }
}
main().catch((error) => parentPort.postMessage({ type: 'failed', message: String(error && error.stack || error) }))
`
