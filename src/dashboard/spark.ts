import type { Point } from '../ports/metrics-reader.js';
import { type Html, html } from './html.js';

const WIDTH = 160;
const HEIGHT = 28;

/**
 * A small line chart of `points` over [from, to], drawn by the server as SVG (no script). A
 * counting series has no point for a minute with nothing in it: `gaps: 'zero'` draws those at 0.
 */
export function sparkline(
  points: readonly Point[],
  o: { readonly from: number; readonly to: number; readonly label: string; readonly gaps?: 'zero' | 'join'; readonly stepMs?: number },
): Html {
  const step = o.stepMs ?? 60_000;
  let shown = points.filter((p) => p.at >= o.from && p.at <= o.to);
  // No point at all is no data (a server without these metrics), not a flat zero.
  if (o.gaps === 'zero' && shown.length > 0) {
    const at = new Map(shown.map((p) => [Math.floor(p.at / step) * step, p.value]));
    shown = [];
    for (let t = Math.floor(o.from / step) * step; t < o.to; t += step) shown.push({ at: t, value: at.get(t) ?? 0 });
  }
  if (shown.length === 0) return html`<span class="muted" title="${o.label}: no data in this window">no data</span>`;
  const max = Math.max(...shown.map((p) => p.value), 1);
  const span = Math.max(1, o.to - o.from);
  const xy = shown.map(
    (p) => `${(((p.at - o.from) / span) * WIDTH).toFixed(1)},${(HEIGHT - 2 - (p.value / max) * (HEIGHT - 4)).toFixed(1)}`,
  );
  const last = shown.at(-1)!.value;
  return html`<svg class="spark" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${o.label}: now ${fmt(last)}, max ${fmt(max)}" data-points="${shown.length}"><title>${o.label}: now ${fmt(last)}, max ${fmt(max)}</title><polyline points="${xy.join(' ')}"/></svg>`;
}

function fmt(v: number): string {
  return Number.isInteger(v) ? String(v) : v.toFixed(1);
}
