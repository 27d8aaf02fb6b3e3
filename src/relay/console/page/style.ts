/** The operator page's stylesheet, served as `/ui/page.css` (the CSP allows no inline style). */
export const PAGE_CSS = `
:root {
  --ink: #1d2433; --muted: #5d6679; --line: #dfe3ea; --panel: #ffffff; --bg: #f4f6f9;
  --accent: #2f5bd3; --ok: #1c7c4a; --ok-bg: #e3f4ea; --warn: #8a5a00; --warn-bg: #fff3d6;
  --bad: #b42318; --bad-bg: #fde8e6;
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  color: var(--ink); background: var(--bg);
}
* { box-sizing: border-box; }
body { margin: 0; }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
header.bar {
  display: flex; align-items: center; gap: 16px; padding: 10px 24px;
  background: #16203a; color: #fff;
}
header.bar .brand { font-weight: 650; font-size: 16px; letter-spacing: .2px; color: #fff; }
header.bar .brand span { color: #9fb4ff; font-weight: 500; }
header.bar .spacer { flex: 1; }
header.bar form { margin: 0; }
/* A read session's page: every action (a POST form) is left out but signing out; the relay refuses them anyway. */
body.read-only form[method="post"]:not(.sign-out) { display: none; }
.read-only-notice { margin: 12px 24px 0; }
header.bar button { background: transparent; color: #dfe6ff; border: 1px solid #3d4a70; }
header.bar button:hover { background: #24305a; }
main { max-width: 1180px; margin: 0 auto; padding: 20px 24px 40px; }
h1 { font-size: 20px; margin: 0 0 14px; }
h2 { font-size: 15px; margin: 26px 0 10px; color: var(--muted); text-transform: uppercase; letter-spacing: .6px; }
.health { padding: 3px 10px; border-radius: 999px; font-size: 12px; font-weight: 600; }
.health.ok { background: #1f6f46; color: #eafff2; }
.health.bad { background: #b42318; color: #fff; }
.notice { padding: 10px 14px; border-radius: 6px; margin: 0 0 16px; background: var(--ok-bg); color: var(--ok); }
.notice.bad { background: var(--bad-bg); color: var(--bad); }
.tiles { display: grid; grid-template-columns: repeat(auto-fit, minmax(170px, 1fr)); gap: 12px; }
.tile { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; }
.tile .label { color: var(--muted); font-size: 12px; }
.tile .value { font-size: 24px; font-weight: 650; font-variant-numeric: tabular-nums; }
.tile .unit { color: var(--muted); font-size: 12px; font-weight: 400; }
.tile.bad .value { color: var(--bad); }
table { width: 100%; border-collapse: collapse; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; overflow: hidden; }
th, td { text-align: left; padding: 7px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: 12px; color: var(--muted); font-weight: 600; background: #fafbfd; }
tr:last-child td { border-bottom: 0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.error, dd.error { color: var(--bad); overflow-wrap: anywhere; }
td.error { max-width: 380px; }
td.mono, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
.status { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: 12px; font-weight: 600; }
.status.delivered { background: var(--ok-bg); color: var(--ok); }
.status.pending { background: var(--warn-bg); color: var(--warn); }
.status.failed { background: var(--bad-bg); color: var(--bad); }
.muted { color: var(--muted); }
form.filters { display: flex; gap: 10px; align-items: end; margin: 0 0 10px; flex-wrap: wrap; }
label { display: grid; gap: 3px; font-size: 12px; color: var(--muted); }
form#suppress-form { display: grid; gap: 10px; max-width: 640px; margin: 0 0 16px; }
form#suppress-form textarea { font: inherit; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; padding: 5px 8px; border: 1px solid #c9cfdb; border-radius: 6px; width: 100%; }
form#suppress-form label.erase .notice { margin: 4px 0 0; }
form#suppress-form button { justify-self: start; }
select, input[type=password], input[type=text] {
  font: inherit; padding: 5px 8px; border: 1px solid #c9cfdb; border-radius: 6px; background: #fff; min-width: 150px;
}
button {
  font: inherit; padding: 5px 12px; border-radius: 6px; border: 1px solid var(--accent);
  background: var(--accent); color: #fff; cursor: pointer;
}
button.secondary { background: #fff; color: var(--accent); }
td form { margin: 0; }
.pager { margin-top: 10px; display: flex; gap: 14px; }
dl.fields { display: grid; grid-template-columns: max-content 1fr; gap: 6px 18px; background: var(--panel);
  border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; margin: 0; }
dl.fields dt { color: var(--muted); }
dl.fields dd { margin: 0; overflow-wrap: anywhere; }
pre.json { background: #0f1628; color: #dfe6ff; padding: 14px 16px; border-radius: 8px; overflow: auto; font-size: 12.5px; }
.signin { max-width: 380px; margin: 10vh auto; background: var(--panel); border: 1px solid var(--line);
  border-radius: 10px; padding: 26px 28px; }
.signin h1 { margin-bottom: 4px; }
.signin form { display: grid; gap: 14px; margin-top: 18px; }
.signin input { width: 100%; }
.circuit { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: 12px; font-weight: 600; }
.circuit.closed { background: var(--ok-bg); color: var(--ok); }
.circuit.open, .circuit.half-open { background: var(--bad-bg); color: var(--bad); }
.circuit.paused { background: var(--warn-bg); color: var(--warn); }
td .body, pre.body { white-space: pre-wrap; overflow-wrap: anywhere; margin: 4px 0 0; font-size: 12px; }
pre.body { background: #f6f7fa; border: 1px solid var(--line); border-radius: 6px; padding: 6px 8px; max-height: 220px; overflow: auto; }
details.exchange summary { cursor: pointer; color: var(--accent); font-size: 12px; }
input[type=search] { font: inherit; padding: 5px 8px; border: 1px solid #c9cfdb; border-radius: 6px; min-width: 240px; }
label.search { flex-basis: 100%; }
a.button { display: inline-block; padding: 5px 12px; border-radius: 6px; background: var(--bad); color: #fff; }
a.button:hover { text-decoration: none; opacity: .9; }
p.bulk { margin: 0 0 10px; }
`
