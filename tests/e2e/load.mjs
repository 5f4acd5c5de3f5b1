// A small load generator for `parley serve` (not a test): closed-loop
// streaming clients (greedy, like `parley bench-serve`), each sending requests
// back to back; prints output tokens/s and time-to-first-token percentiles.
//   node tests/e2e/load.mjs URL [concurrency=16] [requests=64] [prompt_words=100] [max_tokens=64] [idle=0]
// `idle` opens that many extra keep-alive connections that stay silent.
import net from 'node:net';

const [url = 'http://127.0.0.1:8080', concurrency = 16, requests = 64, promptWords = 100, maxTokens = 64, idle = 0] =
  process.argv.slice(2).map((a, i) => (i === 0 ? a : Number(a)));
const words = ['the', 'little', 'dog', 'ran', 'home', 'sun', 'tree', 'happy', 'cat', 'big', 'red', 'ball', 'girl',
  'boy', 'park', 'bird', 'sang', 'day', 'mom', 'play'];
// A different prompt per request and per run (no prefix shared beyond chance), about one token per word.
const makePrompt = () => Array.from({ length: promptWords }, () => words[Math.floor(Math.random() * words.length)]).join(' ');

async function one() {
  const prompt = makePrompt();
  const t0 = performance.now();
  const r = await fetch(`${url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ prompt, max_tokens: maxTokens, ignore_eos: true, temperature: 0, stream: true,
      stream_options: { include_usage: true } }) });
  let ttft = null;
  let tokens = 0;
  let promptTokens = 0;
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const part of r.body) {
    if (ttft === null) ttft = performance.now() - t0;
    buffered += decoder.decode(part, { stream: true });
    const m = buffered.match(/"completion_tokens":(\d+),"prompt_tokens":(\d+)/);
    if (m) [tokens, promptTokens] = [Number(m[1]), Number(m[2])];
  }
  return { ttft, tokens, promptTokens, total: performance.now() - t0 };
}

const pct = (xs, p) => xs.slice().sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p / 100 * xs.length))];
const host = new URL(url);
const idlers = Array.from({ length: idle }, () => net.connect(Number(host.port), host.hostname));
const results = [];
let next = 0;
const start = performance.now();
await Promise.all(Array.from({ length: concurrency }, async () => {
  while (next++ < requests) results.push(await one());
}));
const seconds = (performance.now() - start) / 1000;
const tokens = results.reduce((s, r) => s + r.tokens, 0);
const ttfts = results.map((r) => r.ttft);
const totals = results.map((r) => r.total);
const promptMean = results.reduce((s, r) => s + r.promptTokens, 0) / results.length;
console.log(JSON.stringify({ concurrency, requests: results.length, idle, prompt_tokens_mean: promptMean, output_tok_s: +(tokens / seconds).toFixed(1),
  ttft_p50_ms: +pct(ttfts, 50).toFixed(1), ttft_p99_ms: +pct(ttfts, 99).toFixed(1),
  latency_p50_ms: +pct(totals, 50).toFixed(1), seconds: +seconds.toFixed(2) }));
idlers.forEach((s) => s.destroy());
