// Minimal SVG line charts for bench/report.mjs (no plotting libraries):
// linear axes with round ticks, one polyline with dots per series, a legend.
const colors = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b'];
const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

// About five round tick values covering [0, max].
function ticks(max) {
  if (!(max > 0)) return [0, 1];
  const raw = max / 5;
  const step = [1, 2, 2.5, 5, 10].map((m) => m * 10 ** Math.floor(Math.log10(raw))).find((s) => s >= raw);
  const out = [];
  for (let v = 0; v <= max + step * 1e-9; v += step) out.push(+v.toPrecision(12));
  if (out[out.length - 1] < max) out.push(+(out[out.length - 1] + step).toPrecision(12));
  return out;
}

const fmt = (v) => (Math.abs(v) >= 1000 ? v.toLocaleString('en-US') : String(+v.toPrecision(4)));

// series: [{ name, points: [[x, y], ...] }]; xs are placed by index (categorical)
// when `categorical`, which suits 1, 4, 16, 64 clients.
export function lineChart({ title, xLabel, yLabel, series, categorical = false }) {
  const W = 640, H = 360, L = 70, R = 150, T = 40, B = 50;
  const xsAll = [...new Set(series.flatMap((s) => s.points.map((p) => p[0])))].sort((a, b) => a - b);
  const yTicks = ticks(Math.max(0, ...series.flatMap((s) => s.points.map((p) => p[1]))));
  const yMax = yTicks[yTicks.length - 1];
  const xTicks = categorical ? xsAll : ticks(Math.max(...xsAll));
  const xMax = categorical ? xsAll.length - 1 : xTicks[xTicks.length - 1];
  const px = (x) => L + (W - L - R) * (categorical ? xsAll.indexOf(x) : x) / (xMax || 1);
  const py = (y) => H - B - (H - T - B) * y / (yMax || 1);
  const parts = [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2}" y="22" text-anchor="middle" font-size="14" font-weight="bold">${esc(title)}</text>`];
  for (const y of yTicks) {
    parts.push(`<line x1="${L}" x2="${W - R}" y1="${py(y)}" y2="${py(y)}" stroke="#ddd"/>`,
      `<text x="${L - 6}" y="${py(y) + 4}" text-anchor="end">${fmt(y)}</text>`);
  }
  for (const x of xTicks) {
    parts.push(`<line x1="${px(x)}" x2="${px(x)}" y1="${H - B}" y2="${H - B + 4}" stroke="#333"/>`,
      `<text x="${px(x)}" y="${H - B + 18}" text-anchor="middle">${fmt(x)}</text>`);
  }
  parts.push(`<line x1="${L}" x2="${W - R}" y1="${H - B}" y2="${H - B}" stroke="#333"/>`,
    `<line x1="${L}" x2="${L}" y1="${T}" y2="${H - B}" stroke="#333"/>`,
    `<text x="${(L + W - R) / 2}" y="${H - 10}" text-anchor="middle">${esc(xLabel)}</text>`,
    `<text transform="translate(16 ${(T + H - B) / 2}) rotate(-90)" text-anchor="middle">${esc(yLabel)}</text>`);
  series.forEach((s, i) => {
    const c = colors[i % colors.length];
    const pts = s.points.map(([x, y]) => `${px(x).toFixed(1)},${py(y).toFixed(1)}`);
    parts.push(`<polyline fill="none" stroke="${c}" stroke-width="2" points="${pts.join(' ')}"/>`);
    for (const p of pts) parts.push(`<circle cx="${p.split(',')[0]}" cy="${p.split(',')[1]}" r="3" fill="${c}"/>`);
    parts.push(`<rect x="${W - R + 12}" y="${T + i * 20}" width="12" height="12" fill="${c}"/>`,
      `<text x="${W - R + 30}" y="${T + i * 20 + 10}">${esc(s.name)}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}
