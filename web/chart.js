// A small time-series line chart on a canvas: one line per series, the
// newest sample at the right edge, a y axis from 0 to the largest value
// shown (or a fixed maximum, e.g. 100 for percentages). Colours come from the
// page's CSS variables, so it follows light and dark mode.

const css = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

function niceCeiling(value) {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 2.5, 5, 10]) if (value <= step * power) return step * power;
  return 10 * power;
}

function formatValue(value) {
  if (Math.abs(value) >= 100) return Math.round(value).toString();
  if (Math.abs(value) >= 10) return value.toFixed(1).replace(/\.0$/, '');
  return value.toFixed(2).replace(/\.?0+$/, '') || '0';
}

export class LineChart {
  // series: [{label}] (colours --series-1, --series-2, ...); max: fixed top or null.
  constructor(canvas, { series, max = null, capacity = 120 }) {
    this.canvas = canvas;
    this.series = series;
    this.max = max;
    this.capacity = capacity;
    this.samples = [];  // arrays of one value (or null) per series
  }

  push(values) {
    this.samples.push(values);
    if (this.samples.length > this.capacity) this.samples.shift();
  }

  top() {
    if (this.max !== null) return this.max;
    const all = this.samples.flat().filter((v) => v !== null && Number.isFinite(v));
    return niceCeiling(Math.max(0, ...all));
  }

  // Fits the backing store to the element's size and the screen's pixel ratio.
  resize() {
    const ratio = window.devicePixelRatio || 1;
    const width = Math.max(1, Math.round(this.canvas.clientWidth * ratio));
    const height = Math.max(1, Math.round(this.canvas.clientHeight * ratio));
    if (this.canvas.width !== width || this.canvas.height !== height) {
      this.canvas.width = width;
      this.canvas.height = height;
    }
    return ratio;
  }

  draw() {
    const ratio = this.resize();
    const ctx = this.canvas.getContext('2d');
    const { width, height } = this.canvas;
    const pad = { left: 40 * ratio, right: 6 * ratio, top: 6 * ratio, bottom: 6 * ratio };
    const plotW = width - pad.left - pad.right;
    const plotH = height - pad.top - pad.bottom;
    const top = this.top();
    const y = (v) => pad.top + plotH * (1 - Math.min(v, top) / top);
    const x = (i) => pad.left + plotW * (i + this.capacity - this.samples.length) / (this.capacity - 1);

    ctx.clearRect(0, 0, width, height);
    ctx.font = `${11 * ratio}px system-ui, sans-serif`;
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    ctx.lineWidth = ratio;
    for (let k = 0; k <= 4; k++) {
      const value = (top * k) / 4;
      ctx.strokeStyle = css('--border');
      ctx.beginPath();
      ctx.moveTo(pad.left, y(value));
      ctx.lineTo(width - pad.right, y(value));
      ctx.stroke();
      ctx.fillStyle = css('--muted');
      ctx.fillText(formatValue(value), pad.left - 4 * ratio, y(value));
    }
    ctx.lineWidth = 2 * ratio;
    this.series.forEach((_, s) => {
      ctx.strokeStyle = css(`--series-${s + 1}`);
      ctx.beginPath();
      let drawing = false;
      this.samples.forEach((values, i) => {
        const v = values[s];
        if (v === null || !Number.isFinite(v)) { drawing = false; return; }
        if (drawing) ctx.lineTo(x(i), y(v));
        else ctx.moveTo(x(i), y(v));
        drawing = true;
      });
      ctx.stroke();
    });
  }
}
