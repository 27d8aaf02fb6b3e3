/** A fragment of HTML that is safe to insert as is: built by {@link html}, never from raw input. */
export class Html {
  readonly text: string
  constructor(text: string) {
    this.text = text
  }
  toString(): string {
    return this.text
  }
}

/**
 * A tagged template that escapes every value it is given (`${message.event}` shows `<script>` as
 * text), except fragments built by `html` itself. Arrays are joined; `undefined`, `null` and
 * `false` render as nothing, so `${cond && html`…`}` works. Attribute values must be quoted with `"`.
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!
  values.forEach((value, index) => {
    out += render(value) + strings[index + 1]!
  })
  return new Html(out)
}

/** Text escaped for HTML content and double- or single-quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!)
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

function render(value: unknown): string {
  if (value instanceof Html) return value.text
  if (Array.isArray(value)) return value.map(render).join('')
  if (value === undefined || value === null || value === false) return ''
  return escapeHtml(String(value))
}
