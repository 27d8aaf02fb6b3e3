import {
  ANY_TYPE_HANDLER,
  FUNCTION_ERROR_BYTES,
  FUNCTION_LOG_BYTES,
  FUNCTION_LOG_LINES,
  FUNCTION_REPLY_CHARS,
  HANDLER_BY_TYPE,
} from '../../config/function-limits'

/**
 * The script run in each sandbox before the function's code: the globals a function gets beyond
 * the language's own (`console`, `RetryError`, `ValidationError`, `TextEncoder`, `TextDecoder`,
 * `URL`, `URLSearchParams`, `sha256`, `hmacSha256`), written in the sandbox's own JavaScript over
 * three host calls (hashing and URL parsing) that it captures and then deletes from the global
 * object. Its value is the worker's entries (a batch of calls, and what the worker reads after a
 * call that ended outside the prelude's catch), reachable by no code of the function's. No
 * backticks and no `${` inside.
 */
const HANDLER_CASES = Object.entries(HANDLER_BY_TYPE)
  .map(([type, name]) => `    case ${JSON.stringify(type)}: own = globalThis.${name}; break`)
  .join('\n')

export const PRELUDE = `(() => {
'use strict'
const hostSha256 = globalThis.__hostSha256, hostHmac = globalThis.__hostHmac, hostUrl = globalThis.__hostUrl
delete globalThis.__hostSha256; delete globalThis.__hostHmac; delete globalThis.__hostUrl
const define = (name, value) => Object.defineProperty(globalThis, name, { value, writable: true, configurable: true })
const OutOfMemory = globalThis.InternalError
// Taken now: the function's code may replace the globals, and the prelude's own work (its console
// caps, its replies) must not follow (the relay applies the caps again, outside the sandbox).
const stringify = JSON.stringify, parse = JSON.parse, isArray = Array.isArray
// And what the batch's own bookkeeping uses, called through apply: the code may replace the
// methods, or put setters on Array.prototype, but cannot move a reply to another call.
const apply = Reflect.apply, join = Array.prototype.join, arrayFrom = Array.from, ArrayOf = Array
const promiseResolve = Promise.resolve, promiseThen = Promise.prototype.then, PromiseOf = Promise

class RetryError extends Error { constructor(message) { super(message); this.name = 'RetryError' } }
class ValidationError extends Error { constructor(message) { super(message); this.name = 'ValidationError' } }
define('RetryError', RetryError)
define('ValidationError', ValidationError)
define('sha256', (text) => hostSha256(String(text)))
define('hmacSha256', (key, text) => hostHmac(String(key), String(text)))

function utf8Length(s) {
  let n = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x80) n += 1
    else if (c < 0x800) n += 2
    else if (c >= 0xd800 && c < 0xdc00 && i + 1 < s.length) { n += 4; i++ }
    else n += 3
  }
  return n
}
class TextEncoder {
  get encoding() { return 'utf-8' }
  encode(input = '') {
    const s = String(input), out = []
    for (let i = 0; i < s.length; i++) {
      let c = s.codePointAt(i)
      if (c > 0xffff) i++
      else if (c >= 0xd800 && c < 0xe000) c = 0xfffd
      if (c < 0x80) out.push(c)
      else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63))
      else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63))
      else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63))
    }
    return new Uint8Array(out)
  }
}
class TextDecoder {
  get encoding() { return 'utf-8' }
  decode(input) {
    if (input === undefined) return ''
    const b = input instanceof Uint8Array ? input : new Uint8Array(input.buffer ?? input)
    let s = ''
    for (let i = 0; i < b.length; ) {
      const c = b[i]
      const n = c < 0x80 ? 0 : c >= 0xf0 && c < 0xf8 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : -1
      if (n < 0 || i + n >= b.length) { s += '\\ufffd'; i++; continue }
      let cp = n === 0 ? c : c & (0x3f >> n)
      let ok = true
      for (let k = 1; k <= n; k++) {
        if ((b[i + k] & 0xc0) !== 0x80) { ok = false; break }
        cp = (cp << 6) | (b[i + k] & 63)
      }
      if (!ok) { s += '\\ufffd'; i++; continue }
      s += String.fromCodePoint(cp)
      i += n + 1
    }
    return s
  }
}
define('TextEncoder', TextEncoder)
define('TextDecoder', TextDecoder)

const formEncode = (s) => encodeURIComponent(s).replace(/[!'()~]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase()).replace(/%20/g, '+')
const formDecode = (s) => { try { return decodeURIComponent(s.replace(/\\+/g, ' ')) } catch { return s } }
class URLSearchParams {
  #list = []
  constructor(init = '') {
    if (typeof init === 'string') {
      for (const part of (init.startsWith('?') ? init.slice(1) : init).split('&')) {
        if (part === '') continue
        const eq = part.indexOf('=')
        this.#list.push(eq < 0 ? [formDecode(part), ''] : [formDecode(part.slice(0, eq)), formDecode(part.slice(eq + 1))])
      }
    } else if (init instanceof URLSearchParams || Array.isArray(init)) {
      for (const [k, v] of init) this.#list.push([String(k), String(v)])
    } else if (init !== null && typeof init === 'object') {
      for (const k of Object.keys(init)) this.#list.push([k, String(init[k])])
    }
  }
  get size() { return this.#list.length }
  append(k, v) { this.#list.push([String(k), String(v)]) }
  delete(k) { this.#list = this.#list.filter(([n]) => n !== String(k)) }
  get(k) { const e = this.#list.find(([n]) => n === String(k)); return e === undefined ? null : e[1] }
  getAll(k) { return this.#list.filter(([n]) => n === String(k)).map(([, v]) => v) }
  has(k) { return this.#list.some(([n]) => n === String(k)) }
  set(k, v) {
    const i = this.#list.findIndex(([n]) => n === String(k))
    if (i < 0) { this.append(k, v); return }
    this.#list[i] = [String(k), String(v)]
    this.#list = this.#list.filter(([n], j) => j <= i || n !== String(k))
  }
  sort() { this.#list.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) }
  forEach(fn, self) { for (const [k, v] of this.#list) fn.call(self, v, k, this) }
  keys() { return this.#list.map(([k]) => k)[Symbol.iterator]() }
  values() { return this.#list.map(([, v]) => v)[Symbol.iterator]() }
  entries() { return this.#list.map(([k, v]) => [k, v])[Symbol.iterator]() }
  [Symbol.iterator]() { return this.entries() }
  toString() { return this.#list.map(([k, v]) => formEncode(k) + '=' + formEncode(v)).join('&') }
}
define('URLSearchParams', URLSearchParams)

// Parsed by the host (Node's WHATWG parser); kept as parts here. href, search and toString()
// follow changes made through searchParams, pathname and hash.
class URL {
  #parts
  constructor(url, base) {
    const parsed = hostUrl(String(url), base === undefined ? undefined : String(base))
    if (parsed === undefined) throw new TypeError('Invalid URL: ' + String(url))
    this.#parts = parse(parsed)
    this.searchParams = new URLSearchParams(this.#parts.search)
  }
  static canParse(url, base) { return hostUrl(String(url), base === undefined ? undefined : String(base)) !== undefined }
  get protocol() { return this.#parts.protocol }
  get username() { return this.#parts.username }
  get password() { return this.#parts.password }
  get host() { return this.#parts.host }
  get hostname() { return this.#parts.hostname }
  get port() { return this.#parts.port }
  get origin() { return this.#parts.origin }
  get pathname() { return this.#parts.pathname }
  set pathname(v) { this.#parts.pathname = String(v) }
  get hash() { return this.#parts.hash }
  set hash(v) { v = String(v); this.#parts.hash = v === '' ? '' : v.startsWith('#') ? v : '#' + v }
  get search() { const q = this.searchParams.toString(); return q === '' ? '' : '?' + q }
  set search(v) { this.searchParams = new URLSearchParams(String(v)) }
  get href() {
    const p = this.#parts
    if (!p.slashes) return p.protocol + p.pathname + this.search + p.hash
    const auth = p.username === '' ? '' : p.username + (p.password === '' ? '' : ':' + p.password) + '@'
    return p.protocol + '//' + auth + p.host + p.pathname + this.search + p.hash
  }
  toString() { return this.href }
  toJSON() { return this.href }
}
define('URL', URL)

// console: each call's lines, up to ${FUNCTION_LOG_LINES} lines and ${FUNCTION_LOG_BYTES} bytes.
let logs = [], logBytes = 0, logsTruncated = false
const show = (v) => {
  if (typeof v === 'string') return v
  if (v instanceof Error) return v.stack ? v.name + ': ' + v.message + '\\n' + v.stack : v.name + ': ' + v.message
  try { const j = stringify(v); return j === undefined ? String(v) : j } catch { return String(v) }
}
// The longest start of s that fits in max UTF-8 bytes (never half a surrogate pair).
const cutUtf8 = (s, max) => {
  let n = 0, i = 0
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i)
    const b = c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xd800 && c < 0xdc00 && i + 1 < s.length ? 4 : 3
    if (n + b > max) break
    n += b
    if (b === 4) i++
  }
  return s.slice(0, i)
}
const logAt = (level) => (...args) => {
  if (logsTruncated) return
  if (logs.length >= ${FUNCTION_LOG_LINES}) { logsTruncated = true; return }
  let line = (level === 'log' ? '' : level + ': ') + args.map(show).join(' ')
  let bytes = utf8Length(line)
  // The line that crosses the cap is kept up to it, and nothing after it.
  if (logBytes + bytes > ${FUNCTION_LOG_BYTES}) {
    logsTruncated = true
    line = cutUtf8(line, ${FUNCTION_LOG_BYTES} - logBytes)
    bytes = utf8Length(line)
    if (line === '') return
  }
  logs.push(line)
  logBytes += bytes
}
define('console', Object.freeze({ log: logAt('log'), info: logAt('info'), warn: logAt('warn'), error: logAt('error'), debug: logAt('debug') }))

// A switch of the types, each reading its handler by a name fixed here (no key made per call).
const handlerFor = (type) => {
  let own
  switch (type) {
${HANDLER_CASES}
  }
  if (typeof own === 'function') return own
  const any = globalThis.${ANY_TYPE_HANDLER}
  return typeof any === 'function' ? any : undefined
}
// Set by an error reply: the crossing stops after it (see runBatch).
let errored = false
const reply = (body) => {
  if (body.kind === 'error') errored = true
  body.logs = logs; body.logsTruncated = logsTruncated
  return stringify(body)
}
// The reply of a call that logged nothing, without a stringify: most calls are these.
const quiet = () => logs.length === 0 && !logsTruncated
const done = (value) => {
  if (value === null || value === undefined) return quiet() ? '{"kind":"drop"}' : reply({ kind: 'drop' })
  if (typeof value !== 'object' || isArray(value)) {
    return reply({ kind: 'error', message: 'the function returned ' + (isArray(value) ? 'an array' : 'a ' + typeof value) + ', not an event object (or null to drop it)' })
  }
  let json
  try { json = stringify(value) } catch (error) { return failed(error) }
  // JSON never holds a raw newline: the reply's JSON, then the event's (see the worker's parseReply).
  return quiet() ? '{"kind":"event"}\\n' + json : reply({ kind: 'event' }) + '\\n' + json
}
// An error's text, cut to FUNCTION_ERROR_BYTES here so that a long one still comes back whole
// (the relay cuts it again, outside).
const errorCut = (text) => {
  text = String(text)
  const cut = text.length * 3 <= ${FUNCTION_ERROR_BYTES} ? text : cutUtf8(text, ${FUNCTION_ERROR_BYTES})
  return cut.length === text.length ? text : cut + '… (' + (text.length - cut.length) + ' more characters cut)'
}
const failed = (error) => {
  if (error instanceof RetryError) return reply({ kind: 'retry', message: errorCut(error.message) })
  if (OutOfMemory !== undefined && error instanceof OutOfMemory && error.message === 'out of memory') {
    return reply({ kind: 'error', code: 'memory', message: 'out of memory' })
  }
  if (error instanceof Error) {
    return reply({ kind: 'error', message: errorCut(error.message === '' ? error.name : error.message), stack: error.stack === undefined ? undefined : errorCut(error.stack) })
  }
  return reply({ kind: 'error', message: errorCut('the function threw ' + show(error)) })
}
// One call: its reply's text, or a promise of it (an async handler).
const call = (event, settingsJson) => {
  if (logs.length > 0) logs = []
  logBytes = 0; logsTruncated = false; errored = false
  const handler = handlerFor(event === null || typeof event !== 'object' ? undefined : event.type)
  if (handler === undefined) return '{"kind":"pass"}'
  let value
  try { value = handler(event, settingsJson === '{}' ? {} : parse(settingsJson)) } catch (error) { return failed(error) }
  if (value !== null && typeof value === 'object' && typeof value.then === 'function') {
    return apply(promiseThen, apply(promiseResolve, PromiseOf, [value]), [done, failed])
  }
  return done(value)
}

// A batch of calls crosses into the sandbox once: the events' JSON array, parsed once, run in
// order, each call's whole ms and its reply, all joined by SEP (a character JSON never holds raw).
// Before each call, the host's progress object gets the call's start (t, epoch ms): the worker's
// interrupt handler reads it, so functionTimeout ends that call alone, with no host call per call.
// The crossing stops after an error reply (the worker checks the memory then) and where a call ends
// outside the catch here (interrupted, never settled): the worker takes the replies so far (take)
// and goes on with the next (resume). These entries are the script's value, never globals: the
// code cannot call them.
const SEP = '\\u0001'
const now = Date.now
let batch
// The replies' list has every slot made up front (own properties: no setter of Array.prototype
// runs).
const newBatch = (events, next, settings, progress) =>
  ({ events, next, settings, progress, out: apply(arrayFrom, ArrayOf, [{ length: 2 * (events.length - next) }]), count: 0 })
const take = (b) => {
  const out = b.out
  out.length = b.count
  b.out = apply(arrayFrom, ArrayOf, [{ length: 2 * (b.events.length - b.next) }])
  b.count = 0
  return apply(join, out, [SEP])
}
// Records a call's reply; the next call's start is this one's end (one clock read a call).
const record = (b, text, t) => {
  if (typeof text !== 'string') text = reply({ kind: 'error', message: 'the function answered no reply the relay can read' })
  if (text.length > ${FUNCTION_REPLY_CHARS}) {
    text = reply({ kind: 'error', message: 'the function answered more than the relay reads (${FUNCTION_REPLY_CHARS} characters of event and console lines)' })
  }
  const end = now()
  b.progress.t = end
  b.out[b.count++] = end - t
  b.out[b.count++] = text
  return !errored
}
const runBatch = (b) => {
  const events = b.events, progress = b.progress, settings = b.settings
  while (b.next < events.length) {
    const t = progress.t
    const text = call(events[b.next++], settings)
    if (typeof text !== 'string') {
      // Once, and only while its crossing is current: a stale chain (its crossing gave up on it as
      // never settling), or one the code's own then calls twice, never records.
      let settled = false
      const go = (text) => {
        if (settled || b !== batch) return undefined
        settled = true
        return record(b, text, t) ? runBatch(b) : take(b)
      }
      return apply(promiseThen, text, [go])
    }
    if (!record(b, text, t)) break
  }
  return take(b)
}
return {
  batch: (eventsJson, settingsJson, progress) => {
    // The parse runs under a call's limit too (the interrupt handler reads t from now on), but is
    // no call's own time.
    progress.t = now()
    batch = newBatch(parse(eventsJson), 0, settingsJson, progress)
    progress.t = now()
    return runBatch(batch)
  },
  resume: () => {
    batch.progress.t = now()
    batch = newBatch(batch.events, batch.next, batch.settings, batch.progress)
    return runBatch(batch)
  },
  take: () => take(batch),
  logs: () => stringify({ logs, logsTruncated }),
}
})()
`
