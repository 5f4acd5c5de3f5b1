// Several `parley serve` replicas behind nginx (deploy/nginx) sharing one
// real redis-server: routing, streaming pass-through, failover when a replica
// dies, and state that outlives its replica. Everything on 127.0.0.1.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { startServer, makeSlowModel, waitForStats, sleep } from './server.mjs';
import { startRedis, startParleyNginx } from './services.mjs';


let slow;
let work;
before(() => {
  slow = makeSlowModel();
  work = mkdtempSync(join(tmpdir(), 'parley-cluster-'));
});
after(() => {
  slow.remove();
  rmSync(work, { recursive: true, force: true });
});

// Redis, `replicas` servers sharing it (when --redis-url exists) and nginx in front.
async function startCluster({ replicas = 3, args = [] } = {}) {
  const parts = [];
  const stopAll = () => Promise.all(parts.map((p) => p.stop()));
  try {
    const redis = await startRedis(work);
    parts.push(redis);
    const started = await Promise.allSettled(Array.from({ length: replicas }, () => startServer(['--redis-url', redis.url, ...args])));
    const servers = started.filter((r) => r.status === 'fulfilled').map((r) => r.value);
    parts.push(...servers);
    const failed = started.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    const nginx = await startParleyNginx(work, servers.map((s) => s.port));
    parts.push(nginx);
    return { url: nginx.url, servers, nginx, redis, stop: stopAll };
  } catch (e) {
    await stopAll();
    throw e;
  }
}

// A request's access log line; nginx writes it just after the response, so
// it may lag behind the client by a moment.
async function logEntry(cluster, requestId) {
  for (let i = 0; i < 100; i++) {
    const entry = cluster.nginx.accessLog().get(requestId);
    if (entry) return entry;
    await sleep(20);
  }
  assert.fail(`no access log line for ${requestId}`);
}

// The replica that answered a request in the end (nginx lists every one it tried).
async function servedBy(cluster, requestId) {
  const last = (await logEntry(cluster, requestId)).upstream.split(', ').pop();
  return cluster.servers.find((s) => last === `127.0.0.1:${s.port}`);
}

// The replicas that answered the requests `ids`, in order.
const servedAll = (cluster, ids) => Promise.all(ids.map((id) => servedBy(cluster, id)));

function post(url, path, body, headers = {}, signal = undefined) {
  return fetch(`${url}${path}`, { method: 'POST', signal,
    headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

const chat = (content, extra = {}) => ({ messages: [{ role: 'user', content }], max_tokens: 8, temperature: 0, ...extra });

test('session ids pin requests to one replica; other requests spread over all of them', async () => {
  const c = await startCluster();
  try {
    for (let s = 0; s < 8; s++) {
      for (let i = 0; i < 3; i++) {
        const r = await post(c.url, '/v1/chat/completions', chat('Hi'), { 'x-session-id': `s${s}`, 'x-request-id': `s${s}-${i}` });
        assert.equal(r.status, 200);
        await r.json();
      }
    }
    // The path and the query name a session too.
    for (const path of ['/v1/sessions/s0', '/v1/models?session_id=s0']) {
      const r = await fetch(`${c.url}${path}`, { headers: { 'x-request-id': path } });
      await r.text();
    }
    await Promise.all(Array.from({ length: 12 }, (_, i) =>
      post(c.url, '/v1/chat/completions', chat('Hello', { max_tokens: 32 }), { 'x-request-id': `free-${i}` }).then((r) => r.json())));

    const bySession = [];
    for (let s = 0; s < 8; s++) {
      const replicas = new Set(await servedAll(c, [0, 1, 2].map((i) => `s${s}-${i}`)));
      assert.equal(replicas.size, 1, `session s${s} moved between replicas`);
      bySession.push(...replicas);
    }
    assert.ok(new Set(bySession).size >= 2, 'eight sessions all hashed to one replica');
    assert.equal(await servedBy(c, '/v1/sessions/s0'), bySession[0]);
    assert.equal(await servedBy(c, '/v1/models?session_id=s0'), bySession[0]);
    const free = new Set(await servedAll(c, Array.from({ length: 12 }, (_, i) => `free-${i}`)));
    assert.ok(free.size >= 2, 'requests without a session went to one replica only');
    assert.equal((await logEntry(c, 's0-0')).pool, 'parley_by_session');
    assert.equal((await logEntry(c, 'free-0')).pool, 'parley_least_conn');
  } finally {
    await c.stop();
  }
});

test('SSE chunks pass through nginx as they are generated (no buffering)', async () => {
  const c = await startCluster({ replicas: 1, args: ['-m', slow.path] });
  try {
    const start = Date.now();
    // Long enough that the first bytes' fixed latency (proxy, connection,
    // prefill: tens of ms) is a small share of the stream on a fast host.
    const r = await post(c.url, '/v1/completions', { prompt: 'Once', max_tokens: 3000, ignore_eos: true, stream: true });
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type'), /^text\/event-stream/);
    assert.equal(r.headers.get('x-accel-buffering'), 'no');
    const arrivals = [];
    let text = '';
    const decoder = new TextDecoder();
    for await (const piece of r.body) {
      arrivals.push(Date.now() - start);
      text += decoder.decode(piece, { stream: true });
    }
    assert.ok(text.endsWith('data: [DONE]\n\n'));
    // Events reach the client while the rest is still being generated.
    const total = arrivals.at(-1);
    assert.ok(arrivals.length >= 20, `${arrivals.length} reads`);
    assert.ok(arrivals[0] < total / 3, `first bytes at ${arrivals[0]} ms of ${total} ms`);
    const halfway = arrivals.filter((ms) => ms < total / 2).length;
    assert.ok(halfway >= 10, `${halfway} reads in the first half`);
  } finally {
    await c.stop();
  }
});

test('WebSocket through nginx: upgrade, streamed answer, session affinity by query', async () => {
  const c = await startCluster({ replicas: 2 });
  try {
    const ws = new WebSocket(`${c.url.replace('http', 'ws')}/v1/ws?session_id=ws1`, { headers: { 'x-request-id': 'ws-1' } });
    await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
    const messages = [];
    const done = new Promise((resolve) => ws.on('message', (d) => {
      const m = JSON.parse(d.toString());
      messages.push(m);
      if (m.finished || m.error) resolve(m);
    }));
    ws.send(JSON.stringify({ prompt: 'Once upon a time', max_tokens: 20, temperature: 0, id: 'w' }));
    const end = await done;
    assert.equal(end.finished, true, JSON.stringify(end));
    assert.equal(end.id, 'w');
    assert.ok(messages.length >= 2);
    ws.close();
    await new Promise((resolve) => ws.once('close', resolve));
    const entry = await logEntry(c, 'ws-1');  // written when the connection ends
    assert.equal(entry.status, 101);
    assert.equal(entry.session, 'ws1');
  } finally {
    await c.stop();
  }
});

test('a session continues with its full history after its replica is killed', async () => {
    const c = await startCluster({ replicas: 2 });
    try {
      const created = await post(c.url, '/v1/sessions', { system_prompt: 'You tell short stories.' });
      assert.equal(created.status, 201);
      const { id } = await created.json();
      const turn = async (content, requestId) => {
        const r = await post(c.url, '/v1/chat/completions', { ...chat(content), session_id: id },
          { 'x-session-id': id, 'x-request-id': requestId });
        assert.equal(r.status, 200, await r.clone().text());
        return r.json();
      };
      const first = await turn('My cat is called Tom.', 'turn-1');
      const home = await servedBy(c, 'turn-1');
      home.proc.kill('SIGKILL');
      await home.exited;

      const second = await turn('What is my cat called?', 'turn-2');
      assert.notEqual(await servedBy(c, 'turn-2'), home);
      // The other replica prepended turn 1 (question and answer) from Redis.
      assert.ok(second.usage.prompt_tokens > first.usage.prompt_tokens + first.usage.completion_tokens,
        `turn 2 prompt ${second.usage.prompt_tokens} tokens, turn 1 ${first.usage.prompt_tokens} + ${first.usage.completion_tokens}`);
      const stored = await (await fetch(`${c.url}/v1/sessions/${id}`)).json();
      assert.deepEqual(stored.turns.map((t) => t.user), ['My cat is called Tom.', 'What is my cat called?']);
      assert.equal(stored.turns[0].assistant, first.choices[0].message.content);
      assert.equal(stored.turns[1].assistant, second.choices[0].message.content);
    } finally {
      await c.stop();
    }
  });

test('rate limits hold across replicas: the sum accepted stays within one bucket', async (t) => {
    const rps = 2;
    const burst = 6;
    const c = await startCluster({ replicas: 3,
      args: ['--api-key', 'k-cluster', '--rate-limit-rps', String(rps), '--rate-limit-burst', String(burst)] });
    try {
      const start = Date.now();
      const results = await Promise.all(Array.from({ length: 30 }, (_, i) =>
        post(c.url, '/v1/chat/completions', chat('Hi', { max_tokens: 1 }),
          { authorization: 'Bearer k-cluster', 'x-request-id': `rl-${i}` }).then(async (r) => { await r.text(); return r.status; })));
      const elapsed = (Date.now() - start) / 1000;
      const accepted = results.filter((s) => s === 200).length;
      t.diagnostic(`${accepted} of ${results.length} accepted in ${elapsed} s`);
      assert.ok(results.every((s) => s === 200 || s === 429), results.join(' '));
      assert.ok(accepted <= burst + Math.ceil(rps * elapsed) + 1, `${accepted} accepted in ${elapsed} s`);
      assert.ok(accepted >= 1);
      // Meaningful only if the requests reached several replicas.
      const replicas = new Set(await servedAll(c, results.map((_, i) => `rl-${i}`)));
      assert.ok(replicas.size >= 2, 'all requests reached one replica');
    } finally {
      await c.stop();
    }
  });

// Reads a streamed completion to its end: 'ok' ([DONE] seen), 'error' (an
// error status, or a stream cut short), or 'hung' (nothing for `ms`).
// `started` resolves at its first bytes (or its end, whichever comes first).
function streamOutcome(url, body, headers, ms) {
  let markStarted;
  const started = new Promise((resolve) => { markStarted = resolve; });
  const outcome = (async () => {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), ms);
    try {
      const r = await post(url, '/v1/completions', body, headers, abort.signal);
      let text = '';
      const decoder = new TextDecoder();
      for await (const piece of r.body) {
        markStarted();
        text += decoder.decode(piece, { stream: true });
      }
      if (r.status !== 200) return 'error';
      return text.endsWith('data: [DONE]\n\n') ? 'ok' : 'error';
    } catch (e) {
      return abort.signal.aborted ? 'hung' : 'error';
    } finally {
      clearTimeout(timer);
      markStarted();
    }
  })();
  return { started, outcome };
}

// Starts the streams; resolves with their outcomes' promises once all of them are under way.
async function startStreams(url, count, body, idPrefix) {
  const streams = Array.from({ length: count }, (_, i) =>
    streamOutcome(url, body, { 'x-request-id': `${idPrefix}${i}` }, 60000));
  await Promise.all(streams.map((x) => x.started));
  return streams.map((x) => x.outcome);
}

test('load with a replica killed midway: every request ends, none hangs, only the dead replica\'s fail',
  async (t) => {
    const c = await startCluster({ replicas: 3, args: ['-m', slow.path] });
    try {
      const body = (stream) => ({ prompt: 'Once', max_tokens: 200, ignore_eos: true, stream, temperature: 0 });
      const n = 12;
      // Streams and (every fourth, so that each replica gets some) non-streamed
      // requests, all in flight when a replica dies.
      const streamed = (i) => i % 4 !== 3;
      const started = [];
      const outcomes = Array.from({ length: n }, (_, i) => {
        const id = `load-${i}`;
        if (!streamed(i)) {
          return post(c.url, '/v1/completions', body(false), { 'x-request-id': id }, AbortSignal.timeout(60000))
            .then((r) => r.json().then((j) => (r.status === 200 && j.choices[0].text ? 'ok' : 'error')))
            .catch(() => 'hung');
        }
        const stream = streamOutcome(c.url, body(true), { 'x-request-id': id }, 60000);
        started.push(stream.started);
        return stream.outcome;
      });
      await Promise.all(started);
      const victim = c.servers[0];
      victim.proc.kill('SIGKILL');
      const results = await Promise.all(outcomes);
      // Requests after the failure go to the survivors.
      const after = await Promise.all(await startStreams(c.url, 4, body(true), 'after-'));

      const count = (list, what) => list.filter((x) => x === what).length;
      const retried = [...c.nginx.accessLog().values()].filter((e) => e.upstream.includes(', ')).length;
      t.diagnostic(`${count(results, 'ok')} ok, ${count(results, 'error')} cut, ${count(results, 'hung')} hung; ` +
        `${retried} retried on another replica`);
      assert.equal(count(results, 'hung'), 0);
      assert.equal(count(results, 'ok') + count(results, 'error'), n);
      assert.deepEqual(after, Array(4).fill('ok'));
      for (let i = 0; i < n; i++) {
        if (results[i] === 'ok') continue;
        // Only a stream that had started on the killed replica may fail;
        // non-streamed requests are retried on another replica.
        assert.ok(streamed(i), `non-streamed request ${i} failed`);
        const entry = await logEntry(c, `load-${i}`);
        assert.equal(entry.upstream, `127.0.0.1:${victim.port}`, `request ${i} failed on ${entry.upstream}`);
      }
      assert.ok(count(results, 'error') >= 1, 'no stream was cut: the kill came too late');
      assert.ok(count(results, 'ok') >= n / 2, `${count(results, 'ok')} of ${n} succeeded`);
    } finally {
      await c.stop();
    }
  });

test('SIGTERM drains a replica while nginx moves new requests to the others', async () => {
  const c = await startCluster({ replicas: 2, args: ['-m', slow.path, '--shutdown-grace', '30'] });
  try {
    const body = { prompt: 'Once', max_tokens: 150, ignore_eos: true, stream: true, temperature: 0 };
    const running = await startStreams(c.url, 4, body, 'd-');
    const draining = c.servers[0];
    draining.proc.kill('SIGTERM');
    // Requests sent before the signal is handled are the replica's to finish;
    // wait until it refuses new work (listener closed, /ready 503).
    for (let i = 0; i < 500; i++) {
      const ready = await fetch(`${draining.url}/ready`).then((r) => r.status, () => 'refused');
      if (ready !== 200) break;
      await sleep(10);
    }
    const during = await startStreams(c.url, 4, body, 'n-');
    assert.deepEqual(await Promise.all(running), Array(4).fill('ok'));
    assert.deepEqual(await Promise.all(during), Array(4).fill('ok'));
    assert.equal((await draining.exited).code, 0);
    assert.ok(!(await servedAll(c, ['n-0', 'n-1', 'n-2', 'n-3'])).includes(draining));
    // The drained replica finished what it had.
    assert.ok((await servedAll(c, ['d-0', 'd-1', 'd-2', 'd-3'])).includes(draining));
  } finally {
    await c.stop();
  }
});

test('Parley\'s 503s (queue full) reach the client and do not take replicas out of nginx', async () => {
  const c = await startCluster({ replicas: 2, args: ['-m', slow.path, '--max-running', '1', '--max-queue', '1'] });
  try {
    const aborts = [];
    const burst = await Promise.all(Array.from({ length: 8 }, () => {
      const abort = new AbortController();
      aborts.push(abort);
      return post(c.url, '/v1/completions', { prompt: 'Once', max_tokens: 3000, ignore_eos: true, stream: true },
        {}, abort.signal);
    }));
    const refused = burst.filter((r) => r.status === 503);
    assert.ok(refused.length >= 1 && refused.length <= 6, burst.map((r) => r.status).join(' '));
    for (const r of refused) {
      assert.ok(r.headers.get('retry-after'));
      assert.doesNotMatch((await r.json()).error.message, /no Parley replica/);  // Parley's, not nginx's
    }
    for (const a of aborts) a.abort();
    for (const s of c.servers) await waitForStats(s.url, (st) => st.running === 0 && st.waiting === 0);
    // Both replicas take requests again at once.
    const next = await Promise.all([1, 2].map(() => post(c.url, '/v1/completions', { prompt: 'Once', max_tokens: 4 })));
    assert.deepEqual(next.map((r) => r.status), [200, 200]);
  } finally {
    await c.stop();
  }
});
