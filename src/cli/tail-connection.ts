import { setTimeout as sleep } from 'node:timers/promises'
import { request } from 'undici'

/** What asking the relay for its stream came to. */
export type StreamAnswer =
  | { kind: 'open'; body: AsyncIterable<Uint8Array> }
  | { kind: 'refused'; status: number; message: string }
  | { kind: 'unreachable'; message: string }

/** The wait before the first reconnection, ms; it doubles at each failure, up to {@link RECONNECT_MAX_MS}. */
export const RECONNECT_MIN_MS = 500
/** The longest wait between two reconnections, ms: a relay back up is read again within it. */
export const RECONNECT_MAX_MS = 10_000

/** The wait before reconnection number `failures` (0 for the first), ms. */
export function reconnectDelay(failures: number): number {
  return Math.min(RECONNECT_MAX_MS, RECONNECT_MIN_MS * 2 ** Math.min(failures, 16))
}

/** Asks for `url`'s stream with the admin token; never rejects but when `signal` aborts it. */
export async function openStream(url: string, adminToken: string, signal?: AbortSignal): Promise<StreamAnswer> {
  let response: Awaited<ReturnType<typeof request>>
  try {
    response = await request(url, {
      headers: { authorization: `Bearer ${adminToken}`, accept: 'text/event-stream' },
      // The stream has no end of its own: no body timeout (keep-alive comments come every 15 s).
      bodyTimeout: 0,
      ...(signal === undefined ? {} : { signal }),
    })
  } catch (error) {
    return { kind: 'unreachable', message: (error as Error).message }
  }
  if (response.statusCode === 200) return { kind: 'open', body: response.body }
  const answer = await response.body.text().catch(() => '')
  return { kind: 'refused', status: response.statusCode, message: errorMessage(answer) }
}

/** Waits `ms`; `false` when `signal` aborted the wait (the command is stopping). */
export async function waitToReconnect(ms: number, signal?: AbortSignal): Promise<boolean> {
  try {
    await sleep(ms, undefined, signal === undefined ? {} : { signal })
    return true
  } catch {
    return false
  }
}

// The relay's JSON error's message (never the whole body of something else).
function errorMessage(answer: string): string {
  try {
    const parsed = JSON.parse(answer) as { error?: { code?: string; message?: string } }
    if (parsed.error?.message !== undefined) return `${parsed.error.code ?? ''} ${parsed.error.message}`.trim()
  } catch {
    // not JSON
  }
  return answer.slice(0, 200)
}
