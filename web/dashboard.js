// The live dashboard: polls GET /v1/stats every second and charts the last
// two minutes. Rates and percentiles the server reports are used as they are;
// otherwise rates are derived from the difference of counters between polls
// (percentiles cannot be derived, so those charts then say so).
import { api, ApiError, kindMessage } from './api.js';
import { LineChart } from './chart.js';

const $ = (id) => document.getElementById(id);
const POLL_MS = 1000;

// {"a": {"b": 1}} → {"a.b": 1}; booleans become 0/1.
function flatten(object, prefix = '', out = {}) {
  for (const [key, value] of Object.entries(object ?? {})) {
    const name = (prefix ? `${prefix}.${key}` : key).toLowerCase();
    if (typeof value === 'number') out[name] = value;
    else if (typeof value === 'boolean') out[name] = value ? 1 : 0;
    else if (value && typeof value === 'object' && !Array.isArray(value)) flatten(value, name, out);
  }
  return out;
}

const toMs = (key, value) => {
  if (/(^|[._])(ms|milliseconds)($|[._])/.test(key)) return value;
  if (/(^|[._])(us|microseconds)($|[._])/.test(key)) return value / 1000;
  if (/(^|[._])(s|sec|seconds)($|[._])/.test(key)) return value * 1000;
  return value;
};

// A reported percentile of `metric` (a pattern of names) in ms, or null:
// accepts ttft_p50_ms, ttft_ms.p50, itl.p99_seconds, …
function percentile(flat, metric, q) {
  const quantile = new RegExp(`(^|[^0-9])(p|q|quantile_?)?0?\\.?${q}($|[^0-9])`);
  for (const [key, value] of Object.entries(flat)) {
    if (metric.test(key) && quantile.test(key) && !/count|sum|bucket|total/.test(key)) return toMs(key, value);
  }
  return null;
}

function reported(flat, pattern) {
  const key = Object.keys(flat).find((k) => pattern.test(k));
  return key === undefined ? null : flat[key];
}

// The change of a counter per second since the last poll (null on the first).
function perSecond(now, prev, key) {
  if (!prev || now.flat[key] === undefined || prev.flat[key] === undefined) return null;
  const seconds = (now.time - prev.time) / 1000;
  return seconds > 0 ? Math.max(0, now.flat[key] - prev.flat[key]) / seconds : null;
}

// hits / (hits + misses) over the last interval, in percent.
function hitRate(now, prev, hitKey, lookupKey) {
  const hits = perSecond(now, prev, hitKey);
  const lookups = perSecond(now, prev, lookupKey);
  return hits === null || lookups === null || lookups === 0 ? null : (100 * hits) / lookups;
}

function responseCacheRate(now, prev) {
  const given = reported(now.flat, /response_cache.*hit_rate/);
  if (given !== null) return given <= 1 ? given * 100 : given;
  const hitKey = Object.keys(now.flat).find((k) => /response_cache.*hits?$/.test(k));
  const missKey = Object.keys(now.flat).find((k) => /response_cache.*miss(es)?$/.test(k));
  if (!hitKey || !missKey || !prev) return null;
  const hits = perSecond(now, prev, hitKey);
  const misses = perSecond(now, prev, missKey);
  return hits + misses > 0 ? (100 * hits) / (hits + misses) : null;
}

const TTFT = /ttft|time_to_first/;
const ITL = /itl|inter_token|tpot/;

// Each chart: its series and how a poll (with the one before) gives their values.
const CHARTS = [
  { id: 'tokens', title: 'Output tokens/s', series: ['tok/s'],
    values: (now, prev) => [reported(now.flat, /(output|generated).*(tok|tokens)_per_s|tokens_per_second|tok_per_s/)
      ?? perSecond(now, prev, 'generated_tokens')] },
  { id: 'ttft', title: 'Time to first token (ms)', series: ['P50', 'P99'], percentiles: true,
    values: (now) => [percentile(now.flat, TTFT, 50), percentile(now.flat, TTFT, 99)] },
  { id: 'itl', title: 'Inter-token latency (ms)', series: ['P50', 'P99'], percentiles: true,
    values: (now) => [percentile(now.flat, ITL, 50), percentile(now.flat, ITL, 99)] },
  { id: 'waiting', title: 'Queue depth (waiting requests)', series: ['waiting'],
    values: (now) => [now.flat.waiting ?? null] },
  { id: 'running', title: 'Running sequences', series: ['running'],
    values: (now) => [now.flat.running ?? null] },
  { id: 'busy', title: 'Engine busy (%)', series: ['busy'], max: 100,
    values: (now, prev) => {
      const us = perSecond(now, prev, 'step_time_us');  // microseconds in engine steps per second
      return [us === null ? null : Math.min(100, us / 1e4)];
    } },
  { id: 'kv', title: 'KV cache usage (%)', series: ['used'], max: 100,
    values: (now) => [now.flat.kv_blocks_total ? (100 * now.flat.kv_blocks_used) / now.flat.kv_blocks_total : null] },
  { id: 'cache', title: 'Cache hit rates (%)', series: ['prefix', 'response'], max: 100,
    values: (now, prev) => [hitRate(now, prev, 'prefix_cache_hit_tokens', 'prefix_cache_query_tokens'),
      responseCacheRate(now, prev)] },
  { id: 'spec', title: 'Speculative drafts kept (%)', series: ['kept'], max: 100,
    values: (now, prev) => [hitRate(now, prev, 'spec_accepted', 'spec_drafted')] },
  { id: 'degraded', title: 'Degraded mode (1 = on)', series: ['degraded'], max: 1,
    values: (now) => [now.flat.degraded ?? null] },
];

function card(spec) {
  const section = document.createElement('section');
  section.className = 'chart-card';
  section.dataset.chart = spec.id;
  const title = document.createElement('h2');
  title.textContent = spec.title;
  const values = document.createElement('output');
  values.className = 'values';
  const canvas = document.createElement('canvas');
  canvas.setAttribute('role', 'img');
  canvas.setAttribute('aria-label', `${spec.title}, last two minutes`);
  section.append(title, values, canvas);
  $('charts').append(section);
  return { spec, values, chart: new LineChart(canvas, { series: spec.series, max: spec.max ?? null }) };
}

function describe(spec, values) {
  if (values.every((v) => v === null)) return spec.percentiles ? 'not reported by this server' : '—';
  return values.map((v, i) => {
    const text = v === null ? '—' : (Number.isInteger(v) || Math.abs(v) >= 100 ? Math.round(v) : v.toFixed(1));
    const legend = document.createElement('span');
    legend.className = `legend-${i + 1}`;
    legend.textContent = `${spec.series[i]} ${text}`;
    return legend;
  });
}

const cards = CHARTS.map(card);
let previous = null;

function update(stats) {
  const now = { time: performance.now(), flat: flatten(stats) };
  for (const c of cards) {
    const values = c.spec.values(now, previous);
    c.chart.push(values);
    c.chart.draw();
    const text = describe(c.spec, values);
    c.values.replaceChildren(...(typeof text === 'string' ? [text] : text.flatMap((n, i) => (i ? [' · ', n] : [n]))));
  }
  previous = now;
  $('model').textContent = stats.model ?? '';
  const degraded = Boolean(now.flat.degraded);
  $('degraded').dataset.on = String(degraded);
  $('degraded').textContent = degraded ? 'Degraded mode' : 'Normal mode';
  $('updated').textContent = `Updated ${new Date().toLocaleTimeString()}`;
}

async function poll() {
  try {
    update(await api('/v1/stats'));
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    $('updated').textContent = e.status === 401
      ? 'This server needs an API key: save it on the chat page (Settings), then reload.' : kindMessage(e);
  } finally {
    setTimeout(poll, POLL_MS);
  }
}

poll();
