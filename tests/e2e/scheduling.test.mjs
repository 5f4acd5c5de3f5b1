// Scheduling from the API: a request's `priority` (lower runs first, as vLLM),
// an API key's default priority (a premium key outranks a free one, whose
// requests may not ask to run ahead of it) and `serve --schedule-policy`.
// Each server runs one sequence at a time (--max-running 1): a long answer
// holds the engine while the requests under test queue, then is cancelled,
// and the order in which the queued ones finish is the engine's order.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, makeSlowModel, waitForStats, binary } from './server.mjs';
import { spawnSync } from 'node:child_process';

let slow;
let dir;
before(() => {
  slow = makeSlowModel();
  dir = mkdtempSync(join(tmpdir(), 'parley-scheduling-'));
  writeFileSync(join(dir, 'keys.json'), JSON.stringify([
    { name: 'premium', key: 'premium-key', priority: -10 },
    { name: 'free', key: 'free-key' },
  ]));
});
after(() => {
  slow.remove();
  rmSync(dir, { recursive: true, force: true });
});

function post(url, body, key, signal) {
  return fetch(`${url}/v1/completions`, { method: 'POST', signal,
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify(body) });
}

// Holds the engine with a long streamed answer until the requests in
// `queued` ([name, body, key]) all wait, then cancels it; resolves with the
// names in the order their answers ended.
async function finishOrder(url, queued, holderKey) {
  const abort = new AbortController();
  const holder = await post(url, { prompt: 'Hold', max_tokens: 100000, ignore_eos: true, stream: true,
    kv_retention: { policy: 'window', window: 64 } }, holderKey, abort.signal);  // runs past the context until cancelled
  assert.equal(holder.status, 200);
  const reader = holder.body.getReader();
  await reader.read();  // it runs
  const order = [];
  const done = [];
  for (const [name, body, key] of queued) {
    done.push(post(url, { temperature: 0, ignore_eos: true, ...body }, key).then(async (r) => {
      assert.equal(r.status, 200, `${name}: ${await r.clone().text()}`);
      await r.json();
      order.push(name);
    }));
    await waitForStats(url, (s) => s.waiting >= done.length, 5000);  // arrival order is the order sent
  }
  abort.abort();
  await reader.cancel().catch(() => {});
  await Promise.all(done);
  return order;
}

test('priority: lower runs first; a key\'s priority is its default and the most urgent it may ask for', async () => {
  const server = await startServer(['-m', slow.path, '--max-running', '1', '--api-keys-file', join(dir, 'keys.json')]);
  try {
    const small = { prompt: 'Once', max_tokens: 4 };
    // The premium key's default (-10) outranks the free one's (0) although it came later.
    assert.deepEqual(await finishOrder(server.url, [['free', small, 'free-key'], ['premium', small, 'premium-key']], 'free-key'),
      ['premium', 'free']);
    // A request may defer itself below its key's default.
    assert.deepEqual(await finishOrder(server.url,
      [['free', small, 'free-key'], ['premium deferred', { ...small, priority: 5 }, 'premium-key']], 'free-key'),
    ['free', 'premium deferred']);
    // But not run ahead of its key.
    const ahead = await post(server.url, { ...small, priority: -1 }, 'free-key');
    assert.equal(ahead.status, 400);
    const { error } = await ahead.json();
    assert.equal(error.param, 'priority');
    assert.match(error.message, /at least 0/);
  } finally {
    assert.equal((await server.stop()).code, 0);
  }
});

test('priority without API keys: any value, lower first', async () => {
  const server = await startServer(['-m', slow.path, '--max-running', '1']);
  try {
    const small = { prompt: 'Once', max_tokens: 4 };
    assert.deepEqual(await finishOrder(server.url,
      [['later', { ...small, priority: 3 }], ['default', small], ['urgent', { ...small, priority: -3 }]]),
    ['urgent', 'default', 'later']);
    const bad = await post(server.url, { ...small, priority: 'high' });
    assert.equal(bad.status, 400);
    assert.equal((await bad.json()).error.param, 'priority');
  } finally {
    assert.equal((await server.stop()).code, 0);
  }
});

test('--schedule-policy: fcfs answers in arrival order, cost-aware the cheapest first', async () => {
  const queued = [['big', { prompt: 'Once', max_tokens: 120 }], ['small', { prompt: 'Once', max_tokens: 4 }]];
  for (const [policy, expected] of [['fcfs', ['big', 'small']], ['cost-aware', ['small', 'big']]]) {
    const server = await startServer(['-m', slow.path, '--max-running', '1', '--schedule-policy', policy]);
    try {
      assert.deepEqual(await finishOrder(server.url, queued), expected, policy);
    } finally {
      assert.equal((await server.stop()).code, 0);
    }
  }
  const bad = spawnSync(binary, ['serve', '--port', '0', '--schedule-policy', 'lifo'], { encoding: 'utf8', timeout: 20000 });
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /schedule-policy/);
});
