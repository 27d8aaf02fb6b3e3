import type { LastHour, MinuteReading } from '../../events/readings'
import { type Html, html } from './html'

// Each chart's drawing, in SVG user units: a bar per minute, the chart as wide as the hour's bars.
const BAR_WIDTH = 4
const BAR_GAP = 1
const HEIGHT = 48
// Colours as SVG presentation attributes: the page's CSP allows no inline style, and the page's
// stylesheet is shared; these attributes are neither.
const COLOURS = { bar: '#2f5bd3', bad: '#b42318', axis: '#dfe3ea' }

interface Chart {
  title: string
  unit: string
  value: (minute: MinuteReading) => number | undefined
  colour: string
}

const CHARTS: readonly Chart[] = [
  { title: 'Ingested', unit: 'msg/min', value: (m) => m.ingested, colour: COLOURS.bar },
  { title: 'Delivered', unit: '/min', value: (m) => m.delivered, colour: COLOURS.bar },
  { title: 'Dead-lettered', unit: '/min', value: (m) => m.deadLettered, colour: COLOURS.bad },
  { title: 'p99 attempt time', unit: 'ms', value: (m) => m.p99Ms, colour: COLOURS.bar },
]

/**
 * The overview's last hour as small bar charts drawn here (SVG, no script): ingest and delivery
 * rates, dead letters and the p99 attempt time, a bar per minute, so the shape of an incident is
 * seen at a glance. Each bar's `<title>` says its minute and value (a pointer over it shows it).
 */
export function lastHourCharts(hour: LastHour): Html {
  return html`<div class="tiles charts">${CHARTS.map((chart) => chartOf(chart, hour))}</div>`
}

function chartOf(chart: Chart, hour: LastHour): Html {
  const values = hour.map(chart.value)
  const peak = Math.max(0, ...values.map((v) => v ?? 0))
  const now = values.at(-1)
  const width = hour.length * (BAR_WIDTH + BAR_GAP)
  const summary = `${chart.title}, last ${hour.length} minutes: peak ${peak} ${chart.unit}, this minute ${now ?? 'none'}`
  const bars = hour.map((minute, i) => {
    const value = values[i]
    if (value === undefined || value <= 0) return ''
    // At least a sliver, so a minute with a little is told from one with none.
    const height = Math.max(1, Math.round((value / peak) * HEIGHT))
    return html`<rect x="${i * (BAR_WIDTH + BAR_GAP)}" y="${HEIGHT - height}" width="${BAR_WIDTH}" height="${height}" fill="${chart.colour}"><title>${clock(minute.at)} · ${value} ${chart.unit}</title></rect>`
  })
  return html`<figure class="tile chart">
  <figcaption class="label">${chart.title} <span class="unit">· peak ${peak} ${chart.unit}</span></figcaption>
  <svg role="img" aria-label="${summary}" viewBox="0 0 ${width} ${HEIGHT + 1}" width="100%" height="${HEIGHT + 1}" preserveAspectRatio="none">
    <line x1="0" y1="${HEIGHT + 0.5}" x2="${width}" y2="${HEIGHT + 0.5}" stroke="${COLOURS.axis}" stroke-width="1"/>
    ${bars}
  </svg>
</figure>`
}

// A minute as HH:MM UTC (the page's times are UTC, as the relay's logs).
function clock(at: number): string {
  return `${new Date(at).toISOString().slice(11, 16)} UTC`
}
