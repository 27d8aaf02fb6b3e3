import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** The shipped Prometheus alert rules (docs/operations.md, "Alerts"). */
export const RULES_PATH = fileURLToPath(new URL('../../examples/prometheus/tracklet.rules.yml', import.meta.url))
/** The shipped Grafana dashboard. */
export const DASHBOARD_PATH = fileURLToPath(new URL('../../examples/grafana/tracklet-dashboard.json', import.meta.url))

/** One alert rule of the rules file: its name and PromQL expression. */
export interface AlertRule {
  alert: string
  expr: string
}

/**
 * The rules file's alerts. A small reader of the file's own shape (a list of `- alert:` items, each
 * with an `expr:` on one line or a folded `>-` block), so the test needs no YAML library; promtool
 * and a real Prometheus read the file as YAML.
 */
export function readAlertRules(): AlertRule[] {
  const rules: AlertRule[] = []
  const lines = readFileSync(RULES_PATH, 'utf8').split('\n')
  for (let i = 0; i < lines.length; i++) {
    const alert = /^\s*- alert: (\S+)/.exec(lines[i]!)
    if (alert === null) continue
    const expr = /^(\s*)expr: (.*)$/.exec(lines[i + 1] ?? '')
    if (expr === null) throw new Error(`rule ${alert[1]}: no expr on the line after its name`)
    let text = expr[2]!
    if (text === '>-') {
      const parts: string[] = []
      while (/^\s{10,}\S/.test(lines[i + 2] ?? '')) parts.push(lines[++i + 1]!.trim())
      text = parts.join(' ')
    }
    rules.push({ alert: alert[1]!, expr: text })
  }
  return rules
}

/** Every PromQL expression of the dashboard's panels and variables, with the panel's title. */
export function readDashboardQueries(): { title: string; expr: string }[] {
  const dashboard = JSON.parse(readFileSync(DASHBOARD_PATH, 'utf8')) as {
    panels: { title: string; targets: { expr: string }[] }[]
    templating: { list: { name: string; definition?: string }[] }
  }
  return [
    ...dashboard.panels.flatMap((panel) => panel.targets.map((target) => ({ title: panel.title, expr: target.expr }))),
    ...dashboard.templating.list.flatMap((variable) =>
      variable.definition === undefined ? [] : [{ title: `$${variable.name}`, expr: variable.definition }],
    ),
  ]
}

/** The metric families an expression names (a histogram's `_bucket`, `_sum`, `_count` as its family). */
export function familiesOf(expr: string): string[] {
  const names = expr.match(/\btracklet_[a-z_]+/g) ?? []
  return [...new Set(names.map((name) => name.replace(/_(bucket|sum|count)$/, '')))]
}

/** A dashboard query as Prometheus itself can run it: Grafana's variables given values. */
export function withGrafanaVariables(expr: string): string {
  const definition = /^label_values\((\w+), \w+\)$/.exec(expr)
  if (definition !== null) return definition[1]!
  return expr.replaceAll('$__rate_interval', '1m').replaceAll('$source', '.*')
}
