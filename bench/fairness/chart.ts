/**
 * The picture: wait time over the run per tenant, one panel per mode, drawn with Vega-Lite and
 * rendered headless to SVG (vega's own renderer), then to PNG with resvg.
 */
import type { TopLevelSpec } from 'vega-lite';
import { renderChart } from '../lib/render.js';

export interface ChartPoint {
  readonly mode: string;
  readonly key: string;
  /** Seconds after the workers started, by handler start. */
  readonly t: number;
  /** The longest wait of that key's jobs started in that second, in seconds. */
  readonly wait: number;
}

export async function renderWaitChart(
  points: readonly ChartPoint[],
  modes: readonly string[],
  title: string,
  basePath: string,
): Promise<void> {
  const spec: TopLevelSpec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: title, anchor: 'start' },
    data: { values: points as ChartPoint[] },
    facet: { field: 'mode', type: 'nominal', sort: [...modes], title: null },
    columns: Math.min(3, modes.length),
    spec: {
      width: 320,
      height: 220,
      layer: [
        {
          mark: { type: 'line', strokeWidth: 1.2, point: { size: 14 } },
          encoding: {
            x: { field: 't', type: 'quantitative', title: 'job started at (s after workers started)' },
            y: {
              field: 'wait',
              type: 'quantitative',
              scale: { type: 'log', domain: [0.005, 100], clamp: true },
              title: 'longest wait (s, log)',
            },
            color: { field: 'key', type: 'nominal', title: 'tenant', scale: { scheme: 'tableau20' } },
          },
        },
        { mark: { type: 'rule', strokeDash: [4, 4], color: '#666' }, encoding: { y: { datum: 2 } } },
      ],
    },
    config: { font: 'DejaVu Sans', background: 'white' },
  };
  await renderChart(spec, basePath);
}
