// Protection and operations against a real server (docs/operations.md):
// API keys, rate limits, request ids, validation and the blocklist,
// admission control, timeouts, metrics, degraded mode, and the Prometheus
// alert rules (promtool).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { startServer, makeSlowModel, waitForStats, stats, sleep } from './server.mjs';

const bundled = join(process.cwd(), 'models', 'stories260K.gguf');
let slow, dir;
before(() => {
  slow = makeSlowModel();
  dir = mkdtempSync(join(tmpdir(), 'parley-ops-'));
});
after(() => {
  slow.remove();
  rmSync(dir, { recursive: true, force: true });
});

function post(url, path, body, headers = {}, signal) {
  return fetch(`${url}${path}`, { method: 'POST', signal,
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body) });
}

// One request on a new WebSocket; resolves with the message that ends it.
async function wsAnswer(url, request) {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/ws`);
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
  const end = new Promise((resolve) => ws.on('message', (d) => {
    const m = JSON.parse(d.toString());
    if (m.finished) resolve(m);
  }));
  ws.send(JSON.stringify(request));
  const m = await end;
  ws.close();
  return m;
}

// Stops a server: exit status 0 and no sanitizer report (the ASan build runs these too).
async function stopClean(server) {
  const { code } = await server.stop();
  assert.equal(code, 0, server.stderr().slice(-2000));
  assert.doesNotMatch(server.stderr(), /Sanitizer|runtime error/);
}

const chat = (content, extra = {}) => ({ messages: [{ role: 'user', content }], max_tokens: 4, ...extra });

async function errorOf(response, status, code) {
  assert.equal(response.status, status);
  const { error } = await response.json();
  assert.equal(error.code, code, error.message);
  return error;
}

// The server's JSON log lines so far.
const logLines = (server) => server.stderr().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));

// Resolves with the HTTP status a WebSocket upgrade got (101 on success).
function upgradeStatus(url) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.on('open', () => { ws.close(); resolve(101); });
    ws.on('unexpected-response', (req, res) => { resolve(res.statusCode); req.destroy(); });
    ws.on('error', reject);
  });
}

test('API keys: 401 without or with a wrong key, open health endpoints, WebSocket checked too', async () => {
  const keysFile = join(dir, 'keys.json');
  writeFileSync(keysFile, JSON.stringify([{ name: 'team-a', key: 'file-key-123' }]));
  const server = await startServer(['--api-key', 'flag-key-456', '--api-keys-file', keysFile]);
  try {
    const u = server.url;
    const none = await post(u, '/v1/chat/completions', chat('Hi'));
    await errorOf(none, 401, 'invalid_api_key');
    assert.equal(none.headers.get('www-authenticate'), 'Bearer');
    await errorOf(await post(u, '/v1/chat/completions', chat('Hi'), { authorization: 'Bearer wrong' }), 401, 'invalid_api_key');
    await errorOf(await post(u, '/chat', { prompts: ['Hi'] }), 401, 'invalid_api_key');
    for (const key of ['flag-key-456', 'file-key-123']) {
      const ok = await post(u, '/v1/chat/completions', chat('Hi'), { authorization: `Bearer ${key}` });
      assert.equal(ok.status, 200, await ok.clone().text());
      assert.equal((await ok.json()).object, 'chat.completion');
    }
    for (const path of ['/health', '/ready', '/metrics', '/v1/stats']) assert.equal((await fetch(u + path)).status, 200, path);
    const wsUrl = u.replace('http', 'ws') + '/v1/ws';
    assert.equal(await upgradeStatus(wsUrl), 401);
    assert.equal(await upgradeStatus(`${wsUrl}?api_key=wrong`), 401);
    assert.equal(await upgradeStatus(`${wsUrl}?api_key=file-key-123`), 101);
    await sleep(50);
    assert.ok(!server.stderr().includes('file-key-123') && !server.stderr().includes('flag-key-456'), 'a key was logged');
    assert.match(server.stderr(), /"key":"team-a"/);  // its name is
    const m = await (await fetch(`${u}/metrics`)).text();
    assert.match(m, /parley_unauthorized_total [1-9]/);
  } finally {
    await stopClean(server);
  }
});

test('rate limits: 429 with Retry-After and X-RateLimit headers, then success after the refill', async () => {
  const server = await startServer(['--rate-limit-rps', '1', '--rate-limit-burst', '2']);
  try {
    const u = server.url;
    const first = await fetch(`${u}/v1/models`);
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('x-ratelimit-limit'), '2');
    assert.equal(first.headers.get('x-ratelimit-remaining'), '1');
    assert.ok(Number(first.headers.get('x-ratelimit-reset')) >= 1);
    assert.equal((await fetch(`${u}/v1/models`)).status, 200);
    const limited = await fetch(`${u}/v1/models`);
    await errorOf(limited, 429, 'rate_limit_exceeded');
    const retry = Number(limited.headers.get('retry-after'));
    assert.ok(retry >= 1 && retry <= 2, `Retry-After ${retry}`);
    assert.equal(limited.headers.get('x-ratelimit-remaining'), '0');
    assert.equal((await fetch(`${u}/health`)).status, 200);  // not limited
    await sleep(retry * 1000 + 50);
    assert.equal((await fetch(`${u}/v1/models`)).status, 200);
    assert.match(await (await fetch(`${u}/metrics`)).text(), /parley_rate_limited_total 1\n/);
  } finally {
    await stopClean(server);
  }
});

test('token rate limits reserve prompt + max_tokens and give back what was not used', async () => {
  const server = await startServer(['--rate-limit-tpm', '120']);
  try {
    const u = server.url;
    // Stopped at its first space: almost all of its ~100-token reservation comes back.
    const small = await post(u, '/v1/completions', { prompt: 'Once', max_tokens: 100, stop: [' '], temperature: 0 });
    assert.equal(small.status, 200);
    assert.equal(small.headers.get('x-ratelimit-limit-tokens'), '120');
    await small.json();
    const big = await post(u, '/v1/completions', { prompt: 'Once', max_tokens: 100, ignore_eos: true });
    assert.equal(big.status, 200, 'the unused tokens were given back');
    await big.json();
    const refused = await post(u, '/v1/completions', { prompt: 'Once', max_tokens: 100 });
    await errorOf(refused, 429, 'rate_limit_exceeded');
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
  } finally {
    await stopClean(server);
  }
});

test('request ids: a plain X-Request-Id is echoed, others are replaced, every response has one', async () => {
  const server = await startServer([]);
  try {
    const u = server.url;
    assert.equal((await fetch(`${u}/health`, { headers: { 'x-request-id': 'trace-42.a' } })).headers.get('x-request-id'), 'trace-42.a');
    const bad = (await fetch(`${u}/health`, { headers: { 'x-request-id': 'x'.repeat(300) } })).headers.get('x-request-id');
    assert.match(bad, /^req_[0-9a-f]{24}$/);
    const err = await fetch(`${u}/nope`);
    assert.equal(err.status, 404);
    assert.match(err.headers.get('x-request-id'), /^req_/);
    await sleep(50);
    const line = server.stderr().split('\n').find((l) => l.includes('"request_id":"trace-42.a"'));
    const log = JSON.parse(line);
    assert.equal(log.event, 'access');
    assert.equal(log.status, 200);
    assert.equal(log.path, '/health');
    assert.equal(typeof log.duration_ms, 'number');
  } finally {
    await stopClean(server);
  }
});

test('validation: messages, control characters, UTF-8, prompt tokens, max_tokens cap, blocklist', async () => {
  const blocklist = join(dir, 'blocklist.txt');
  writeFileSync(blocklist, '# refused\n(?i)forbidden\\s+words\nsecret-[0-9]{4}\n');
  const server = await startServer(['--max-messages', '2', '--max-prompt-tokens', '40', '--max-tokens-limit', '5',
    '--blocklist', blocklist]);
  try {
    const u = server.url;
    const three = { messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }, { role: 'user', content: 'c' }] };
    assert.equal((await errorOf(await post(u, '/v1/chat/completions', three), 400, 'too_many_messages')).param, 'messages');
    await errorOf(await post(u, '/v1/chat/completions', chat('bell \u0007 here')), 400, 'invalid_characters');
    await errorOf(await post(u, '/v1/completions', Buffer.from('{"prompt": "a\xff"}', 'latin1')), 400, 'invalid_utf8');
    await errorOf(await post(u, '/v1/completions', { prompt: 'Once '.repeat(60) }), 400, 'prompt_too_long');
    await errorOf(await post(u, '/v1/chat/completions', chat('say FORBIDDEN   words now')), 400, 'content_policy_violation');
    await errorOf(await post(u, '/chat', { prompts: ['ok', 'my secret-1234'] }), 400, 'content_policy_violation');
    const ok = await post(u, '/v1/completions', { prompt: 'Tabs\tand\nnew lines <b>stay</b>', max_tokens: 100, ignore_eos: true });
    assert.equal(ok.status, 200);
    assert.equal((await ok.json()).usage.completion_tokens, 5);  // capped by --max-tokens-limit
    assert.match(await (await fetch(`${u}/metrics`)).text(), /parley_rejected_input_total 6\n/);
  } finally {
    await stopClean(server);
  }
});

test('admission: a burst beyond --max-queue gets 503 + Retry-After, every accepted request completes', async () => {
  // At --log-level warn: a 5xx is logged (at error level) whatever the level.
  const server = await startServer(['-m', slow.path, '--max-running', '2', '--max-queue', '2', '--log-level', 'warn']);
  try {
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) =>
      post(server.url, '/v1/completions', { prompt: `Once ${i}`, max_tokens: 40, ignore_eos: true })
        .then(async (r) => ({ status: r.status, retry: r.headers.get('retry-after'), body: await r.json() }))));
    const ok = results.filter((r) => r.status === 200);
    const shed = results.filter((r) => r.status === 503);
    assert.equal(ok.length + shed.length, 10, JSON.stringify(results.map((r) => r.status)));
    assert.ok(shed.length >= 1, 'some requests were shed');
    assert.ok(ok.length >= 2, 'the running and queued requests were accepted');
    for (const r of ok) assert.equal(r.body.usage.completion_tokens, 40);
    for (const r of shed) {
      assert.equal(r.retry, '1');
      assert.equal(r.body.error.code, 'queue_full');
    }
    const s = await stats(server.url);
    assert.equal(s.shed, shed.length);
    const logged = logLines(server).filter((l) => l.event === 'access');
    assert.equal(logged.length, shed.length, 'one line per 503 and none for the 200s');
    for (const l of logged) assert.deepEqual([l.level, l.status], ['error', 503]);
  } finally {
    await stopClean(server);
  }
});

test('timeout: a request past its deadline ends cleanly with finish_reason "deadline"', async () => {
  const server = await startServer(['-m', slow.path, '--max-request-timeout', '30']);
  try {
    const start = Date.now();
    const r = await post(server.url, '/v1/completions', { prompt: 'Once', max_tokens: 3000, ignore_eos: true, timeout: 0.3 });
    assert.equal(r.status, 200);
    const body = await r.json();
    assert.equal(body.choices[0].finish_reason, 'deadline');
    assert.ok(body.usage.completion_tokens < 3000);
    assert.ok(Date.now() - start < 5000);
    await errorOf(await post(server.url, '/v1/completions', { prompt: 'Once', timeout: 'soon' }), 400, 'invalid_value');
    assert.equal((await stats(server.url)).deadline_exceeded, 1);
  } finally {
    await stopClean(server);
  }
});

test('metrics: histograms, responses by route and status, engine step time, and /v1/stats percentiles move', async () => {
  // A step-time target below any step's time: every step allows one KV block (16 tokens) of prefill.
  const server = await startServer(['--max-step-ms', '0.001']);
  try {
    const u = server.url;
    const metric = (text, name) => Number((text.match(new RegExp(`^${name} (\\S+)$`, 'm')) || [])[1] ?? NaN);
    const before = await (await fetch(`${u}/metrics`)).text();
    assert.equal(metric(before, 'parley_ttft_seconds_count'), 0);
    assert.equal(metric(before, 'parley_queue_wait_seconds_count'), 0);
    for (let i = 0; i < 3; i++) {
      const r = await post(u, '/v1/chat/completions', chat('Tell me a story', { max_tokens: 16, ignore_eos: true, stream: true }));
      await r.text();
    }
    await fetch(`${u}/v1/nope`);
    const after = await (await fetch(`${u}/metrics`)).text();
    assert.equal(metric(after, 'parley_ttft_seconds_count'), 3);
    assert.equal(metric(after, 'parley_inter_token_seconds_count'), 45);
    assert.equal(metric(after, 'parley_e2e_seconds_count'), 3);
    assert.equal(metric(after, 'parley_queue_wait_seconds_count'), 3);
    assert.ok(metric(after, 'parley_queue_wait_seconds_sum') <= metric(after, 'parley_ttft_seconds_sum'));
    assert.match(after, /parley_responses_total\{route="\/v1\/chat\/completions",status="200"\} 3\n/);
    assert.match(after, /parley_responses_total\{route="unmatched",status="404"\} 1\n/);
    assert.ok(metric(after, 'parley_rss_bytes') > 1e6 || (await waitForStats(u, (s) => s.rss_bytes > 1e6)).rss_bytes > 1e6);
    assert.ok(metric(after, 'parley_model_bytes') > 0);
    assert.ok(metric(after, 'parley_step_time_us_total') > 0);
    assert.equal(metric(after, 'parley_prefill_budget'), 16);
    assert.ok(metric(after, 'parley_step_error_us') >= 0);  // present (NaN when missing)
    assert.equal(metric(after, 'parley_spec_drafted_total'), 0);  // present; --spec is off by default
    const s = await waitForStats(u, (x) => x.ttft_p99_s > 0, 3000);
    assert.ok(s.ttft_p99_s >= s.ttft_p50_s && s.ttft_p50_s > 0, JSON.stringify(s));
    assert.ok(s.e2e_p99_s > 0);
    assert.ok(s.output_tokens_per_s >= 0);
    assert.equal(s.queue_wait_count, 3);
    assert.ok(s.queue_wait_p99_s >= 0);
  } finally {
    await stopClean(server);
  }
});

test('degraded mode: slow first tokens switch new requests to the fallback model, and back', async () => {
  const server = await startServer(['-m', slow.path, '--max-running', '1', '--fallback-model', bundled,
    '--degrade-queue-wait-ms', '300', '--degrade-hold', '1']);
  try {
    const u = server.url;
    const plain = await post(u, '/v1/completions', { prompt: 'Once', max_tokens: 2 });
    assert.equal(plain.headers.get('x-parley-degraded'), null);
    await plain.json();
    // One long request runs; a second waits behind it (max-running 1) past the threshold.
    const abort = new AbortController();
    const long = [0, 1].map((i) => post(u, '/v1/completions', { prompt: `Once ${i}`, max_tokens: 4000, ignore_eos: true, stream: true },
      {}, abort.signal).catch(() => null));
    const degraded = await waitForStats(u, (s) => s.degraded === 1, 8000);
    assert.equal(degraded.degraded, 1, 'entered degraded mode');
    const fallback = await post(u, '/v1/completions', { prompt: 'Once', max_tokens: 4 });
    assert.equal(fallback.status, 200);
    assert.equal(fallback.headers.get('x-parley-degraded'), '1');
    await fallback.json();
    // WebSocket requests follow degraded mode too, and their end message says so.
    const wsEnd = await wsAnswer(u, { prompt: 'Once', max_tokens: 4 });
    assert.deepEqual([wsEnd.finish_reason, wsEnd.degraded], ['length', true], JSON.stringify(wsEnd));
    abort.abort();
    await Promise.all(long);
    const recovered = await waitForStats(u, (s) => s.degraded === 0, 8000);
    assert.equal(recovered.degraded, 0, 'left degraded mode');
    assert.equal(recovered.degraded_requests, 2);
    assert.equal((await wsAnswer(u, { prompt: 'Once', max_tokens: 2 })).degraded, undefined);
    const back = await post(u, '/v1/completions', { prompt: 'Once', max_tokens: 2 });
    assert.equal(back.headers.get('x-parley-degraded'), null);
    await back.json();
  } finally {
    await stopClean(server);
  }
});

test('a fallback model with another vocabulary is refused at startup', async () => {
  const other = join(dir, 'other.gguf');
  execFileSync(process.env.PARLEY_BINARY || join(process.cwd(), 'build', 'parley'),
    ['mkmodel', '--dim', '64', '--layers', '1', '--heads', '2', '--vocab-size', '600', '-o', other], { stdio: 'ignore' });
  await assert.rejects(startServer(['--fallback-model', other]), /vocabulary/);
});

test('alert rules pass promtool check and their unit tests', { skip: !existsSync('/usr/bin/promtool') && 'promtool not installed' }, () => {
  const rules = join(process.cwd(), 'deploy', 'prometheus');
  assert.match(execFileSync('promtool', ['check', 'rules', join(rules, 'alerts.yml')], { encoding: 'utf8' }), /SUCCESS: 7 rules found/);
  assert.match(execFileSync('promtool', ['test', 'rules', join(rules, 'alerts_test.yml')], { encoding: 'utf8' }), /SUCCESS/);
});

test('memory watchdog: above --max-rss the engine prefix cache goes first, and new requests are shed', async () => {
  const server = await startServer(['-m', slow.path, '--max-rss', '1M']);
  try {
    const u = server.url;
    // Admitted before the first check (a second after the start), it runs on while the server sheds.
    const abort = new AbortController();
    const long = await post(u, '/v1/completions', { prompt: 'Once upon a time', max_tokens: 4000, ignore_eos: true, stream: true },
      {}, abort.signal);
    assert.equal(long.status, 200);
    const shedding = await waitForStats(u, (s) => s.shedding === 1, 5000);
    assert.equal(shedding.shedding, 1);
    await errorOf(await post(u, '/v1/completions', { prompt: 'Once', max_tokens: 2 }), 503, 'overloaded');
    // Cancelled, its blocks stay cached for prefix reuse: until the next check drops them.
    abort.abort();
    await long.body?.cancel().catch(() => {});
    const s = await waitForStats(u, (x) => x.watchdog_prefix_cache_evictions >= 1 && x.kv_blocks_cached === 0 && x.running === 0, 5000);
    assert.ok(s.watchdog_prefix_cache_evictions >= 1, JSON.stringify(s));
    assert.equal(s.kv_blocks_cached, 0);
    // The dropped blocks' memory went back to the OS with them.
    const released = await waitForStats(u, (x) => x.kv_blocks_committed === 0, 5000);
    assert.equal(released.kv_blocks_committed, 0, JSON.stringify(released));
    const evicted = logLines(server).find((l) => l.event === 'memory_evict' && l.stage === 'prefix_cache');
    assert.ok(evicted && evicted.cached_blocks > 0, 'the eviction was logged with the blocks it dropped');
    assert.equal(evicted.level, 'warn');
    assert.match(await (await fetch(`${u}/metrics`)).text(), /parley_watchdog_prefix_cache_evictions_total [1-9]/);
  } finally {
    await stopClean(server);
  }
});

test('engine log lines: request_finished with usage and timings; prompt and answer text only with --log-content', async () => {
  const prompt = 'Quixotic zebras juggle marmalade under the violet moon';
  for (const content of [false, true]) {
    // No response cache: the second request must reach the engine.
    const server = await startServer(['--response-cache-bytes', '0', ...(content ? ['--log-content'] : [])]);
    try {
      const answers = [];
      for (const n of [1, 2]) {
        const user = n === 2 ? { user: 'end-user-7' } : {};
        const r = await post(server.url, '/v1/completions', { prompt, max_tokens: 24, ignore_eos: true, temperature: 0, ...user },
          { 'x-request-id': `log-${content}-${n}` });
        assert.equal(r.status, 200);
        answers.push((await r.json()).choices[0].text);
      }
      assert.ok(answers[0].trim().length >= 10, answers[0]);
      await sleep(50);
      const finished = (n) => logLines(server).find((l) => l.event === 'request_finished' && l.request_id === `log-${content}-${n}`);
      const first = finished(1), second = finished(2);
      assert.ok(first && second, server.stderr().slice(-2000));
      assert.ok(first.prompt_tokens > 16);
      assert.equal(first.completion_tokens, 24);
      assert.equal(first.finish_reason, 'length');
      assert.equal(first.choice, 0);
      assert.ok(first.queue_wait_ms >= 0 && first.ttft_ms >= first.queue_wait_ms && first.total_ms >= first.ttft_ms, JSON.stringify(first));
      assert.ok(second.cached_prompt_tokens > 0, 'the same prompt again: found in the prefix cache');
      assert.equal(first.user, undefined);
      assert.equal(second.user, 'end-user-7', 'the body\'s end user is logged with the request');
      const others = [['/v1/messages', { max_tokens: 4, messages: [{ role: 'user', content: 'hi' }], metadata: { user_id: 'u-messages' } }],
        ['/v1/responses', { max_output_tokens: 4, input: 'hi', user: 'u-responses' }],
        ['/v1/embeddings', { input: 'hi', user: 'u-embeddings' }]];
      for (const [path, body] of others) {
        const name = path.split('/').pop();
        const r = await post(server.url, path, body, { 'x-request-id': `log-${content}-${name}` });
        assert.equal(r.status, 200, await r.text());
        await sleep(50);
        const line = logLines(server).find((l) => l.event === 'request_finished' && l.request_id === `log-${content}-${name}`);
        assert.equal(line?.user, `u-${name}`, path);
      }
      const log = server.stderr();
      if (content) {
        assert.equal(first.text, answers[0]);
        assert.ok(log.includes(prompt), 'the access line has the request body');
      } else {
        assert.equal(first.text, undefined);
        for (const text of [prompt, answers[0].trim(), JSON.stringify(answers[0].trim()).slice(1, -1)])
          assert.ok(!log.includes(text), `logged without --log-content: ${text}`);
      }
    } finally {
      await stopClean(server);
    }
  }
});

test('--trusted-proxy: X-Forwarded-For picks the rate bucket only through a trusted peer', async () => {
  const limits = ['--rate-limit-rps', '0.1', '--rate-limit-burst', '1'];
  const get = (u, forwarded, id) => fetch(`${u}/v1/models`, { headers: { 'x-forwarded-for': forwarded, 'x-request-id': id } });
  const clientIp = (server, id) => logLines(server).find((l) => l.event === 'access' && l.request_id === id)?.client_ip;
  const trusted = await startServer([...limits, '--trusted-proxy', '10.0.0.0/8', '--trusted-proxy', '127.0.0.1']);
  try {
    const u = trusted.url;
    assert.equal((await get(u, '203.0.113.1', 'a1')).status, 200);
    assert.equal((await get(u, '203.0.113.1', 'a2')).status, 429, 'its bucket is empty');
    assert.equal((await get(u, '203.0.113.2', 'b1')).status, 200, 'another client, another bucket');
    // A forged left-most entry changes nothing: the right-most untrusted one counts.
    assert.equal((await get(u, '198.51.100.7, 203.0.113.2, 10.1.2.3', 'b2')).status, 429);
    await sleep(50);
    assert.equal(clientIp(trusted, 'a1'), '203.0.113.1');
    assert.equal(clientIp(trusted, 'b2'), '203.0.113.2');
  } finally {
    await stopClean(trusted);
  }
  const direct = await startServer(limits);
  try {
    const u = direct.url;
    assert.equal((await get(u, '203.0.113.1', 'c1')).status, 200);
    assert.equal((await get(u, '203.0.113.2', 'c2')).status, 429, 'without --trusted-proxy the header is ignored');
    await sleep(50);
    assert.equal(clientIp(direct, 'c1'), '127.0.0.1');
  } finally {
    await stopClean(direct);
  }
  await assert.rejects(startServer(['--trusted-proxy', '10.0.0.0/33']), /trusted-proxy/);
});
