import { describe, expect, it } from 'vitest'
import type { MinuteReading } from '../../../src/relay/events/readings'
import { lastHourCharts } from '../../../src/relay/console/page/charts-view'

const START = Date.parse('2026-11-26T19:00:00.000Z')

function hour(readings: Record<number, Partial<MinuteReading>>): MinuteReading[] {
  return Array.from({ length: 60 }, (_, i) => ({
    at: START + i * 60_000,
    ingested: 0,
    delivered: 0,
    deadLettered: 0,
    p99Ms: undefined,
    ...readings[i],
  }))
}

/** The bars of the chart titled `title`: each bar's height and its `<title>`. */
function barsOf(svg: string, title: string): { height: number; title: string }[] {
  const figure = svg.split('<figure').find((f) => f.includes(`<figcaption class="label">${title} `))!
  return [...figure.matchAll(/height="(\d+)" fill="[^"]+"><title>([^<]+)<\/title>/g)].map(([, height, text]) => ({
    height: Number(height),
    title: text!,
  }))
}

describe('the overview’s charts of the last hour', () => {
  it('draws a bar per busy minute, scaled to the hour’s peak, each titled with its minute and value', () => {
    const text = lastHourCharts(
      hour({ 10: { ingested: 100, delivered: 90 }, 11: { ingested: 50 }, 59: { ingested: 1, p99Ms: 250 } }),
    ).text
    expect(barsOf(text, 'Ingested')).toEqual([
      { height: 48, title: '19:10 UTC · 100 msg/min' },
      { height: 24, title: '19:11 UTC · 50 msg/min' },
      // A little is still a sliver, told from none.
      { height: 1, title: '19:59 UTC · 1 msg/min' },
    ])
    expect(barsOf(text, 'Delivered')).toEqual([{ height: 48, title: '19:10 UTC · 90 /min' }])
    expect(barsOf(text, 'Dead-lettered')).toEqual([])
    expect(barsOf(text, 'p99 attempt time')).toEqual([{ height: 48, title: '19:59 UTC · 250 ms' }])
    expect(text).toContain('aria-label="Ingested, last 60 minutes: peak 100 msg/min, this minute 1"')
  })

  it('is SVG only: no script, no inline style (the page’s Content-Security-Policy allows neither)', () => {
    const text = lastHourCharts(hour({ 3: { deadLettered: 4 } })).text
    expect(text).toContain('<svg')
    expect(text).not.toMatch(/<script|style=|javascript:/i)
  })
})
