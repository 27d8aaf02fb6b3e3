/** One Server-Sent Event: its `event:` name (`message` when none) and its `data:` text. */
export interface SseEvent {
  event: string
  data: string
}

/**
 * The events of a `text/event-stream` body, in order, as its chunks arrive (a chunk may end in
 * the middle of a line or of a character). Comment lines (`: keep-alive`) and fields other than
 * `event` and `data` are skipped; several `data:` lines join with a line break, as the SSE
 * standard says.
 */
export async function* sseEvents(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder()
  let buffered = ''
  let event = ''
  let data: string[] = []
  for await (const chunk of body) {
    buffered += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true })
    let newline = buffered.indexOf('\n')
    while (newline !== -1) {
      const line = buffered.slice(0, newline).replace(/\r$/, '')
      buffered = buffered.slice(newline + 1)
      newline = buffered.indexOf('\n')
      if (line === '') {
        if (data.length > 0) yield { event: event || 'message', data: data.join('\n') }
        event = ''
        data = []
        continue
      }
      if (line.startsWith(':')) continue
      const colon = line.indexOf(':')
      const field = colon === -1 ? line : line.slice(0, colon)
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '')
      if (field === 'event') event = value
      else if (field === 'data') data.push(value)
    }
  }
}
