/**
 * Plots as plain SVG, written by hand (no chart dependency): one panel per series group,
 * step lines, dashed horizontal reference lines, axes with round ticks.
 */

interface Line {
  label: string;
  color: string;
  points: [number, number][];
  /** A dashed horizontal line in the same colour (a limit). */
  reference?: number;
}

export interface Panel {
  title: string;
  lines: Line[];
  yLabel: string;
  xLabel: string;
}

export const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b'];

const W = 920;
const PANEL_H = 250;
const M = { left: 60, right: 150, top: 30, bottom: 42 };

function niceStep(range: number, ticks: number): number {
  const raw = range / ticks;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const norm = raw / mag;
  return (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * mag;
}

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
const f = (x: number): string => (Math.round(x * 10) / 10).toString();

function panel(p: Panel, top: number): string {
  const xs = p.lines.flatMap((l) => l.points.map((pt) => pt[0]));
  const ys = p.lines.flatMap((l) => [...l.points.map((pt) => pt[1]), l.reference ?? 0]);
  const xMax = Math.max(1, ...xs);
  const yMax = Math.max(1, ...ys) * 1.08;
  const pw = W - M.left - M.right;
  const ph = PANEL_H - M.top - M.bottom;
  const X = (x: number): number => M.left + (x / xMax) * pw;
  const Y = (y: number): number => top + M.top + ph - (y / yMax) * ph;
  const out: string[] = [];
  out.push(`<text x="${M.left}" y="${top + 18}" font-size="14" font-weight="bold">${esc(p.title)}</text>`);
  out.push(`<rect x="${M.left}" y="${top + M.top}" width="${pw}" height="${ph}" fill="none" stroke="#999"/>`);
  const xStep = niceStep(xMax, 10);
  for (let x = 0; x <= xMax + 1e-9; x += xStep) {
    out.push(
      `<line x1="${f(X(x))}" y1="${top + M.top + ph}" x2="${f(X(x))}" y2="${top + M.top + ph + 4}" stroke="#999"/>`,
    );
    out.push(
      `<text x="${f(X(x))}" y="${top + M.top + ph + 16}" font-size="11" text-anchor="middle">${+x.toFixed(2)}</text>`,
    );
  }
  const yStep = niceStep(yMax, 5);
  for (let y = 0; y <= yMax; y += yStep) {
    out.push(`<line x1="${M.left}" y1="${f(Y(y))}" x2="${M.left + pw}" y2="${f(Y(y))}" stroke="#eee"/>`);
    out.push(
      `<text x="${M.left - 6}" y="${f(Y(y) + 4)}" font-size="11" text-anchor="end">${+y.toFixed(2)}</text>`,
    );
  }
  out.push(
    `<text x="${M.left + pw / 2}" y="${top + PANEL_H - 6}" font-size="11" text-anchor="middle">${esc(p.xLabel)}</text>`,
  );
  out.push(
    `<text transform="translate(14 ${top + M.top + ph / 2}) rotate(-90)" font-size="11" text-anchor="middle">${esc(p.yLabel)}</text>`,
  );
  p.lines.forEach((l, i) => {
    if (l.points.length > 0) {
      let d = `M${f(X((l.points[0] as [number, number])[0]))},${f(Y((l.points[0] as [number, number])[1]))}`;
      for (let k = 1; k < l.points.length; k++) {
        const [x, y] = l.points[k] as [number, number];
        d += `H${f(X(x))}V${f(Y(y))}`;
      }
      out.push(`<path d="${d}" fill="none" stroke="${l.color}" stroke-width="1.4"/>`);
    }
    if (l.reference !== undefined) {
      out.push(
        `<line x1="${M.left}" y1="${f(Y(l.reference))}" x2="${M.left + pw}" y2="${f(Y(l.reference))}" stroke="${l.color}" stroke-dasharray="6 4" stroke-width="1"/>`,
      );
    }
    const ly = top + M.top + 12 + i * 16;
    out.push(
      `<line x1="${M.left + pw + 10}" y1="${ly - 4}" x2="${M.left + pw + 28}" y2="${ly - 4}" stroke="${l.color}" stroke-width="2"/>`,
    );
    out.push(`<text x="${M.left + pw + 32}" y="${ly}" font-size="11">${esc(l.label)}</text>`);
  });
  return out.join('\n');
}

/** One SVG document of stacked panels, with a caption under them. */
export function svg(panels: Panel[], caption: string): string {
  const h = panels.length * PANEL_H + 40;
  const body = panels.map((p, i) => panel(p, i * PANEL_H)).join('\n');
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${h}" viewBox="0 0 ${W} ${h}" font-family="sans-serif">`,
    `<rect width="${W}" height="${h}" fill="white"/>`,
    body,
    `<text x="${M.left}" y="${h - 14}" font-size="11" fill="#555">${esc(caption)}</text>`,
    '</svg>',
    '',
  ].join('\n');
}
