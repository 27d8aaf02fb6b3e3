/**
 * The code of the SQLite store's writer thread, as CommonJS source for `new Worker(…, { eval: true })`:
 * the same text runs from the built package and from the TypeScript sources under the test runner,
 * with no loader and no extra Node flag. It opens its own connection to the store's file (the
 * driver from the path in `workerData`: the thread's own cwd could be anywhere) and writes ingest's
 * deliveries there, so the inserts, the index updates and the checkpoints SQLite runs inside a
 * commit cost the relay's thread nothing (docs/sqlite.md, "The writer thread").
 *
 * Each request is `{ id, params }`: the flat values of `params.length / rowParams` rows, bound by
 * the relay's thread with the store's enqueue statement, written in one transaction of their own
 * (so that data one group's request cannot store fails only that group, as on the relay's thread).
 * Every request waiting when the thread wakes is written, each committed without waiting for the
 * disk (`synchronous = NORMAL`), then one flush of the WAL file covers them all, and only then is
 * each answered `{ id, inserted }` (or `{ id, error }`): a 2xx still follows the disk.
 */
export const WRITER_SOURCE = `'use strict'
const { parentPort, workerData, receiveMessageOnPort } = require('node:worker_threads')
const { fdatasyncSync, openSync, closeSync } = require('node:fs')
const Database = require(workerData.driverPath)
const { file, busyTimeout, manySql, oneSql, rows, rowParams } = workerData

const errorOf = (error) => ({ message: String(error && error.message), code: error && error.code })
let db, wal, write
try {
  db = new Database(file)
  db.pragma('busy_timeout = ' + Math.floor(busyTimeout))
  db.pragma('synchronous = NORMAL')
  db.pragma('foreign_keys = ON')
  wal = openSync(file + '-wal', 'r+')
  const many = db.prepare(manySql)
  const one = db.prepare(oneSql)
  const chunk = rows * rowParams
  write = db.transaction((params) => {
    let inserted = 0
    let at = 0
    for (; at + chunk <= params.length; at += chunk) inserted += many.run(params.slice(at, at + chunk)).changes
    for (; at < params.length; at += rowParams) inserted += one.run(params.slice(at, at + rowParams)).changes
    return inserted
  })
} catch (error) {
  // The relay writes on its own thread instead (and says why once).
  parentPort.postMessage({ fatal: errorOf(error) })
  if (db !== undefined) db.close()
  parentPort.close()
}
if (write !== undefined) parentPort.on('message', (first) => {
  const requests = []
  let closing = false
  for (let message = first; message !== undefined; ) {
    if (message.close) {
      closing = true
      break
    }
    requests.push(message)
    const next = receiveMessageOnPort(parentPort)
    message = next && next.message
  }
  const answers = requests.map(({ id, params }) => {
    try {
      return { id, inserted: write(params) }
    } catch (error) {
      return { id, error: errorOf(error) }
    }
  })
  let flushError
  if (answers.some((a) => a.error === undefined)) {
    try {
      fdatasyncSync(wal)
    } catch (error) {
      flushError = errorOf(error)
    }
  }
  for (const answer of answers) {
    parentPort.postMessage(flushError !== undefined && answer.error === undefined ? { id: answer.id, error: flushError } : answer)
  }
  if (closing) {
    closeSync(wal)
    db.close()
    parentPort.close()
  }
})
`
