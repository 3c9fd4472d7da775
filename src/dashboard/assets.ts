/**
 * The dashboard's only assets, shipped in the package (no CDN, no build step): one stylesheet and
 * one small script. The pages work without the script; it only refreshes a live page in place.
 */

export const STYLE = `
:root { color-scheme: light dark; --fg: #1d2330; --muted: #667085; --line: #d9dee7; --bg: #fff; --panel: #f6f8fb;
  --ok: #1a7f37; --bad: #c62828; --warn: #9a6700; --accent: #2f5bd3; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e9ef; --muted: #98a2b3; --line: #344054; --bg: #101418; --panel: #182028; --accent: #7aa2ff; } }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; gap: 1.5rem; align-items: center; padding: .6rem 1.2rem; border-bottom: 1px solid var(--line); background: var(--panel); }
header strong { font-size: 15px; }
nav a { margin-right: 1rem; color: var(--muted); text-decoration: none; }
nav a[aria-current="page"] { color: var(--fg); font-weight: 600; border-bottom: 2px solid var(--accent); }
main { padding: 1rem 1.2rem 3rem; max-width: 1400px; }
h1 { font-size: 18px; margin: .2rem 0 1rem; }
h2 { font-size: 15px; margin: 1.4rem 0 .5rem; }
table { border-collapse: collapse; width: 100%; margin-bottom: 1rem; }
th, td { text-align: left; padding: .35rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .03em; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
code, pre { font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; }
pre { background: var(--panel); padding: .6rem; overflow: auto; max-height: 24rem; white-space: pre-wrap; word-break: break-all; }
.badge { display: inline-block; padding: 0 .45rem; border-radius: 9px; font-size: 12px; font-weight: 600; }
.ok { color: var(--ok); } .bad { color: var(--bad); } .warn { color: var(--warn); } .muted { color: var(--muted); }
.badge.ok { background: color-mix(in srgb, var(--ok) 15%, transparent); }
.badge.bad { background: color-mix(in srgb, var(--bad) 15%, transparent); }
.badge.warn { background: color-mix(in srgb, var(--warn) 15%, transparent); }
form.filters { display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; margin-bottom: 1rem; }
form.filters label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); }
input, select, button { font: inherit; padding: .3rem .5rem; border: 1px solid var(--line); border-radius: 4px; background: var(--bg); color: var(--fg); }
button { cursor: pointer; background: var(--panel); }
button.danger { color: var(--bad); border-color: var(--bad); }
button.primary { color: #fff; background: var(--accent); border-color: var(--accent); }
.actions { display: flex; gap: .5rem; margin: .5rem 0 1rem; }
.notice { padding: .6rem .8rem; border: 1px solid var(--line); background: var(--panel); margin-bottom: 1rem; }
progress { width: 320px; max-width: 100%; accent-color: var(--accent); }
details summary { cursor: pointer; }
svg.spark { vertical-align: middle; }
svg.spark polyline { fill: none; stroke: var(--accent); stroke-width: 1.5; }
`;

/**
 * Refresh a live page in place: every `data-refresh` seconds, fetch the same URL's main part and
 * swap it in, unless the operator is typing in a form or reading an opened message.
 */
export const SCRIPT = `
(() => {
  const main = document.querySelector('main[data-refresh]');
  if (!main) return;
  const every = Number(main.dataset.refresh) * 1000;
  if (!(every > 0)) return;
  const busy = () => main.contains(document.activeElement) && document.activeElement !== main || main.querySelector('details[open]');
  setInterval(async () => {
    if (document.hidden || busy()) return;
    try {
      const res = await fetch(location.href, { headers: { 'x-sqsjobs-fragment': '1' }, credentials: 'same-origin' });
      if (res.ok && res.headers.get('content-type')?.startsWith('text/html')) main.innerHTML = await res.text();
    } catch {}
  }, every);
})();
`;
