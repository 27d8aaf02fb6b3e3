/**
 * The live view's one script, served as `/ui/live.js` (same origin: the only script the page's
 * Content-Security-Policy lets run, and only on `/ui/live`). It reads `GET /v1/stream` with the
 * page's session cookie (EventSource sends it: same origin) and shows each event as a row, newest
 * first. Filters hide rows (and show them again) without reconnecting; pause holds new rows back.
 * Text only ever goes in with `textContent`: nothing an event carries is read as HTML.
 */
export const LIVE_SCRIPT = `'use strict'
;(() => {
  // Rows kept on the page, and messages remembered for filtering their attempts by type, event, userId.
  const MAX_ROWS = 500
  const MAX_MESSAGES = 5000
  const KINDS = ['ingested', 'refused', 'violation', 'filtered', 'attempt', 'skipped']
  const byId = (id) => document.getElementById(id)
  const rows = byId('live-rows')
  const state = byId('live-state')
  const pause = byId('live-pause')
  const filters = { source: byId('live-source'), type: byId('live-type'), event: byId('live-event'), userId: byId('live-user') }
  const messages = new Map()
  const shown = []
  let held = []
  let heldDropped = 0
  let paused = false

  const remember = (data) => {
    messages.set(data.messageId, { type: data.type, event: data.event, userId: data.userId })
    if (messages.size > MAX_MESSAGES) messages.delete(messages.keys().next().value)
  }
  // The message an event is about: its own fields for ingested, else those its ingested event had.
  const messageOf = (kind, data) => (kind === 'ingested' ? data : messages.get(data.messageId) || {})
  const wanted = (input, value) => input.value.trim() === '' || input.value.trim() === String(value ?? '')
  const matches = (kind, data) => {
    if (kind === 'skipped') return true
    const message = messageOf(kind, data)
    return (
      (filters.source.value === '' || data.source === filters.source.value) &&
      wanted(filters.type, message.type) &&
      wanted(filters.event, message.event) &&
      wanted(filters.userId, message.userId)
    )
  }
  const cell = (tr, text, className) => {
    const td = document.createElement('td')
    td.textContent = text ?? ''
    if (className) td.className = className
    tr.append(td)
    return td
  }
  const describe = (kind, data) => {
    if (kind === 'attempt') {
      const said = data.status !== undefined ? 'HTTP ' + data.status : ''
      return [data.outcome, said, data.error, data.ms + ' ms', data.url].filter(Boolean).join(' · ')
    }
    if (kind === 'skipped') return data.count + ' events skipped: this view did not keep up with the stream'
    if (kind === 'ingested') return 'accepted'
    return [data.kind, data.reason].filter(Boolean).join(' · ')
  }
  const rowOf = (kind, data) => {
    const tr = document.createElement('tr')
    tr.className = 'live-' + kind + (kind === 'attempt' ? ' ' + data.outcome : '')
    const message = messageOf(kind, data)
    cell(tr, (data.at || new Date().toISOString()).slice(11, 23))
    cell(tr, kind)
    cell(tr, data.source)
    cell(tr, [message.type, message.event].filter(Boolean).join(' · '))
    cell(tr, message.userId)
    cell(tr, data.messageId, 'mono')
    cell(tr, describe(kind, data), kind === 'refused' || data.outcome === 'failed' || data.outcome === 'retry' ? 'error' : '')
    const link = cell(tr, '')
    if (data.deliveryId !== undefined) {
      const a = document.createElement('a')
      a.href = '/ui/deliveries/' + encodeURIComponent(data.deliveryId)
      a.textContent = kind === 'attempt' ? 'Request and answer →' : 'Delivery →'
      link.append(a)
    }
    return tr
  }
  const show = (kind, data) => {
    const tr = rowOf(kind, data)
    tr.hidden = !matches(kind, data)
    rows.prepend(tr)
    shown.unshift({ kind, data, tr })
    while (shown.length > MAX_ROWS) shown.pop().tr.remove()
  }
  const say = (text) => {
    state.textContent = text
  }
  const heldNote = () => 'Paused: ' + (held.length + heldDropped) + ' new events held back'
  const add = (kind, data) => {
    if (kind === 'ingested') remember(data)
    if (!paused) return show(kind, data)
    held.push([kind, data])
    if (held.length > MAX_ROWS) {
      held.shift()
      heldDropped++
    }
    say(heldNote())
  }

  pause.addEventListener('click', () => {
    paused = !paused
    pause.textContent = paused ? 'Resume' : 'Pause'
    pause.setAttribute('aria-pressed', String(paused))
    if (paused) return say(heldNote())
    if (heldDropped > 0) show('skipped', { count: heldDropped })
    for (const [kind, data] of held) show(kind, data)
    held = []
    heldDropped = 0
    say('Live')
  })
  for (const input of Object.values(filters)) {
    input.addEventListener('input', () => {
      for (const row of shown) row.tr.hidden = !matches(row.kind, row.data)
    })
  }

  const stream = new EventSource('/v1/stream')
  for (const kind of KINDS) stream.addEventListener(kind, (e) => add(kind, JSON.parse(e.data)))
  stream.addEventListener('open', () => say(paused ? heldNote() : 'Live'))
  stream.addEventListener('error', () => {
    say(
      stream.readyState === EventSource.CLOSED
        ? 'Disconnected: the relay refused the stream (signed out, or as many live readers as it takes). Reload to try again.'
        : 'Reconnecting…',
    )
  })
})()
`
