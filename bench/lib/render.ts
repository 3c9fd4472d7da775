/** Render a Vega-Lite spec headless (vega's own renderer) to `<basePath>.svg`, then to PNG with resvg. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { Resvg } from '@resvg/resvg-js';
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';

export async function renderChart(spec: TopLevelSpec, basePath: string): Promise<void> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  const svg = await view.toSVG();
  view.finalize();
  mkdirSync(dirname(basePath), { recursive: true });
  writeFileSync(`${basePath}.svg`, svg);
  const png = new Resvg(svg, { fitTo: { mode: 'zoom', value: 2 }, font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' } })
    .render()
    .asPng();
  writeFileSync(`${basePath}.png`, png);
}
