/**
 * bench:admission's picture: jobs waiting to start (SQS's backlog and the worker's held) and their
 * wait over the run, with and without admission, the high-water mark and the SLA drawn in;
 * Vega-Lite rendered headless to SVG, then PNG with resvg.
 */
import type { TopLevelSpec } from 'vega-lite';
import { renderChart } from '../lib/render.js';
import type { Field } from 'vega-lite/types_unstable/channeldef.d.ts';
import type { LayerSpec } from 'vega-lite/types_unstable/spec/layer.d.ts';

export interface ChartRow {
  readonly phase: string;
  readonly t: number;
  readonly measure: 'waiting to start (jobs)' | 'longest wait (s)';
  readonly value: number;
}

export async function renderAdmissionChart(rows: readonly ChartRow[], lines: { mark: number; sla: number }, basePath: string) {
  const panel = (measure: ChartRow['measure'], rule: number, ruleLabel: string): LayerSpec<Field> => ({
    width: 560,
    height: 200,
    transform: [{ filter: { field: 'measure', equal: measure } }],
    layer: [
      {
        mark: { type: 'line', strokeWidth: 1.5 },
        encoding: {
          x: { field: 't', type: 'quantitative', title: 'seconds into the run' },
          y: { field: 'value', type: 'quantitative', title: measure },
          color: { field: 'phase', type: 'nominal', title: null, scale: { range: ['#d62728', '#1f77b4'] } },
        },
      },
      { mark: { type: 'rule', strokeDash: [4, 4], color: '#555' }, encoding: { y: { datum: rule } } },
      {
        mark: { type: 'text', align: 'left', dx: 4, dy: -6, color: '#555' },
        encoding: { x: { datum: 0 }, y: { datum: rule }, text: { value: ruleLabel } },
      },
    ],
  });
  const spec: TopLevelSpec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: 'Offered 3x what the workers drain: with and without admission', anchor: 'start' },
    data: { values: rows as ChartRow[] },
    vconcat: [
      panel('waiting to start (jobs)', lines.mark, `high-water mark ${Math.round(lines.mark)}`),
      panel('longest wait (s)', lines.sla, `SLA ${lines.sla} s`),
    ],
    config: { font: 'DejaVu Sans', background: 'white' },
  };
  await renderChart(spec, basePath);
}
