import { write } from 'node:fs'
import { Writable } from 'node:stream'
import { addLogSink, type LogEvent, type LogFormat, oneLine } from './log'

/**
 * Bytes of log lines a stream may hold unwritten before new lines are dropped (and counted). A
 * reader that stops reading must cost the relay neither its event loop nor unbounded memory.
 */
export const MAX_BUFFERED_LOG_BYTES = 1024 * 1024

/** How long stopping waits for unwritten lines to leave: a process exiting keeps its last words. */
const MAX_DRAIN_WAIT_MS = 5000

/**
 * One event as a line: `time level msg` for people, or one JSON object for log pipelines.
 * `worker`: the worker of `tracklet relay --workers N` that writes it, a field of every line
 * (`[worker 2]` before the message in text).
 */
export function formatLogLine(event: LogEvent, format: LogFormat, worker?: number): string {
  if (format === 'json') {
    const fields = worker === undefined ? event.fields : { ...event.fields, worker }
    return `${JSON.stringify({ time: event.time, level: event.level, msg: event.msg, ...fields })}\n`
  }
  return `${event.time} ${event.level.padEnd(5)} ${worker === undefined ? '' : `[worker ${worker}] `}${oneLine(event.msg)}\n`
}

/**
 * Writes every event from now on to `stream`, one line each, in `format` (each line naming
 * `worker` when given), until the returned
 * function is called; the promise it returns settles once the lines written so far have left.
 * While the stream holds more than {@link MAX_BUFFERED_LOG_BYTES} unwritten,
 * lines are dropped, and the first line written after says how many.
 */
export function writeLogTo(
  stream: NodeJS.WritableStream & { writableLength?: number },
  format: LogFormat,
  worker?: number,
): () => Promise<void> {
  let dropped = 0
  const remove = addLogSink((event) => {
    if ((stream.writableLength ?? 0) > MAX_BUFFERED_LOG_BYTES) {
      dropped++
      return
    }
    if (dropped > 0) {
      const lost = {
        time: event.time,
        level: 'warn',
        msg: `${dropped} log lines dropped: the log's reader fell behind`,
        fields: { event: 'log-lines-dropped', dropped },
      } as const
      stream.write(formatLogLine(lost, format, worker))
      dropped = 0
    }
    stream.write(formatLogLine(event, format, worker))
  })
  return () => {
    remove()
    // Writes complete in order: this one's callback runs once everything before it is written. A
    // reader that never reads again gets MAX_DRAIN_WAIT_MS; this timer also keeps the process
    // alive that long, for the writer's retries.
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, MAX_DRAIN_WAIT_MS)
      stream.write('', () => {
        clearTimeout(timer)
        resolve()
      })
    })
  }
}

/**
 * Standard error as a stream whose writes never block the event loop. `process.stderr` writes
 * synchronously to a pipe or a file on Linux, so a log reader that stalls (a full pipe) would stall
 * ingest and delivery with it. This one writes from libuv's thread pool, one write at a time, and
 * when the descriptor is non-blocking and full (`EAGAIN`) tries again shortly, holding the lines
 * meanwhile ({@link writeLogTo} bounds how many).
 */
export function nonBlockingStderr(): Writable {
  return new FdWriter(2)
}

// The wait before writing again to a full non-blocking descriptor: short at first, then capped.
const FULL_RETRY_MS = [5, 20, 100] as const

class FdWriter extends Writable {
  readonly #fd: number

  constructor(fd: number) {
    super({ decodeStrings: true })
    this.#fd = fd
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.#writeFrom(chunk, 0, 0, done)
  }

  #writeFrom(chunk: Buffer, offset: number, fullTries: number, done: () => void): void {
    if (offset >= chunk.length) {
      done()
      return
    }
    write(this.#fd, chunk, offset, chunk.length - offset, null, (error, written) => {
      if (error === null) {
        this.#writeFrom(chunk, offset + written, 0, done)
      } else if ((error as NodeJS.ErrnoException).code === 'EAGAIN') {
        const wait = FULL_RETRY_MS[Math.min(fullTries, FULL_RETRY_MS.length - 1)]
        // Unreferenced: a reader that never reads again must not keep the process alive.
        setTimeout(() => this.#writeFrom(chunk, offset, fullTries + 1, done), wait).unref()
      } else {
        // The reader is gone (EPIPE) or the descriptor broke: nowhere to write, and nothing to tell.
        done()
      }
    })
  }
}
