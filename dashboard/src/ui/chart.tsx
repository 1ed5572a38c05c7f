import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartSeries {
  label: string;
  values: Array<number | null>;
  color: string;
}

/**
 * A time-series chart (uPlot): `x` in unix seconds. Redrawn in place when the data changes; resized with
 * its container. The series are described in words in the figure's label for screen readers. A null value
 * is drawn as a gap (unknown, e.g. a cost bucket of unpriced requests only); `data-blank` counts them.
 */
export function TimeChart({ title, x, series, height = 180 }: { title: string; x: number[]; series: ChartSeries[]; height?: number }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot>(undefined);
  const shape = series.map((s) => s.label).join('|');
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const opts: uPlot.Options = {
      width: el.clientWidth || 600,
      height,
      legend: { show: true },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true } },
      axes: [{ stroke: 'currentColor', grid: { stroke: 'rgba(128,128,128,.15)' } }, { stroke: 'currentColor', grid: { stroke: 'rgba(128,128,128,.15)' }, size: 60 }],
      series: [{}, ...series.map((s) => ({ label: s.label, stroke: s.color, width: 2, fill: `${s.color}22`, points: { show: false } }))],
    };
    const u = new uPlot(opts, [x, ...series.map((s) => s.values)] as uPlot.AlignedData, el);
    plot.current = u;
    const ro = new ResizeObserver(() => u.setSize({ width: el.clientWidth || 600, height }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      u.destroy();
      plot.current = undefined;
    };
  }, [shape, height]);
  useEffect(() => {
    plot.current?.setData([x, ...series.map((s) => s.values)] as uPlot.AlignedData);
  }, [x, series]);
  return (
    <figure className="chart" aria-label={`${title}: ${series.map((s) => s.label).join(', ')}`}>
      <figcaption>{title}</figcaption>
      <div ref={box} className="chart-box" data-points={x.length} data-blank={series.reduce((n, s) => n + s.values.filter((v) => v === null).length, 0)} />
    </figure>
  );
}

export const COLORS = ['#3b82f6', '#ef4444', '#10b981', '#f59e0b', '#8b5cf6', '#ec4899', '#14b8a6', '#64748b'];
