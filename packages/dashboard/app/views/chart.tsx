/**
 * Requests started per second against the limit line: the compliance audit, drawn with
 * uPlot. The bars are what the stats endpoint counted (attempt start times); the line is the
 * limit in force at each second, from the limit's recorded changes (a per-minute or per-hour
 * limit drawn as its average per second), so a changed limit shows as a step, also on a page
 * opened after the change. Only with adaptive pacing a second line (and its legend) shows
 * the effective limit the rate limiter planned with (docs/adr/0008): below the limit while
 * the receiver pushes back; without it that is the limit, and the line would say nothing.
 */

import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';

export interface ChartData {
  /** Unix seconds, one per bar. */
  t: number[];
  sent: number[];
  limit: (number | null)[];
  /** The effective limit per second (adaptive pacing); null where not known. */
  effective: (number | null)[];
}

export function RateChart({ data, label, adaptive }: { data: ChartData; label: string; adaptive: boolean }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const bars = uPlot.paths.bars?.({ size: [0.8, 40] });
    const options: uPlot.Options = {
      width: el.clientWidth,
      height: 260,
      legend: { live: false },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.15)] } },
      axes: [
        {
          stroke: '#5b6573',
          grid: { stroke: '#eef0f3' },
          space: 70,
          values: (_u, splits) =>
            splits.map((t) => new Date(t * 1_000).toLocaleTimeString(undefined, { hour12: false })),
        },
        { stroke: '#5b6573', grid: { stroke: '#eef0f3' }, label: 'requests started / s', size: 60 },
      ],
      series: [
        {},
        {
          label: 'sent / s',
          stroke: '#2f6fde',
          fill: 'rgba(47,111,222,0.35)',
          width: 0,
          ...(bars ? { paths: bars } : {}),
        },
        {
          label: 'limit',
          stroke: '#d9480f',
          width: 2,
          dash: [6, 4],
          paths: uPlot.paths.stepped?.({ align: 1 }),
        },
        ...(adaptive
          ? [
              {
                label: 'effective limit',
                stroke: '#2b8a3e',
                width: 2,
                paths: uPlot.paths.stepped?.({ align: 1 }),
              },
            ]
          : []),
      ],
    };
    plot.current = new uPlot(options, adaptive ? [[], [], [], []] : [[], [], []], el);
    const resize = new ResizeObserver(() => plot.current?.setSize({ width: el.clientWidth, height: 260 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
  }, [adaptive]);

  useEffect(() => {
    const drawn: uPlot.AlignedData = adaptive
      ? [data.t, data.sent, data.limit, data.effective]
      : [data.t, data.sent, data.limit];
    plot.current?.setData(drawn);
  }, [data, adaptive]);

  // The newest figures as attributes too: what a test (or a screen reader's user) can read.
  const recent = data.sent.slice(-6);
  const steps = data.limit.filter((v, i) => v !== null && v !== data.limit[i - 1]);
  return (
    <div
      ref={box}
      class="chart"
      role="img"
      aria-label={label}
      data-peak={recent.length > 0 ? Math.max(...recent) : 0}
      data-limit={data.limit.at(-1) ?? ''}
      data-limit-steps={steps.join(',')}
      data-effective={adaptive ? (data.effective.at(-1) ?? '') : ''}
    />
  );
}
