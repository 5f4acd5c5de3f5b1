// `parley loadtest --json` against a real `parley serve` (bundled stories260K,
// a 512-token context, so prompts stay short): the counts in its report add
// up, every request succeeds, and a server's 4xx answers are counted as errors.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startServer, binary } from './server.mjs';

const run = promisify(execFile);
let server;
let seed = 0;  // each run its own prompts: no answer comes from the server's response cache
before(async () => { server = await startServer(); });
after(async () => assert.equal((await server.stop()).code, 0));

async function loadtest(...args) {
  const { stdout } = await run(binary, ['loadtest', '--url', server.url, '--json', '--prompt-tokens', '6',
    '--max-tokens', '8', '--ignore-eos', '--temperature', '0', '--seed', String(++seed), ...args], { timeout: 60000 });
  return JSON.parse(stdout);
}

// Every request succeeded, each generated 8 tokens and was timed.
function assertAllSucceeded(r, n) {
  assert.deepEqual(r.requests, { total: n, succeeded: n, failed: 0 }, JSON.stringify(r.errors));
  assert.equal(r.errors.total, 0);
  assert.equal(r.output_tokens, 8 * n);
  assert.ok(r.prompt_tokens >= 6 * n);
  for (const key of ['ttft_ms', 'e2e_ms']) {
    assert.equal(r[key].count, n);
    assert.ok(r[key].p50 > 0 && r[key].p50 <= r[key].p99 && r[key].p99 <= r[key].max, key);
  }
  assert.ok(r.e2e_ms.mean >= r.ttft_ms.mean);
  assert.ok(r.requests_per_s > 0 && r.output_tokens_per_s > 0);
}

test('closed loop: 3 users, 9 streamed chat requests', async () => {
  const r = await loadtest('--concurrency', '3', '--requests', '9');
  assertAllSucceeded(r, 9);
  assert.equal(r.config.mode, 'closed');
  assert.equal(r.config.model, 'stories260K');  // the first of GET /v1/models
  assert.ok(r.itl_ms.count <= 9 * 7);  // at most one gap between each two of the 8 tokens
});

test('open loop: Poisson arrivals, completions, not streamed', async () => {
  const r = await loadtest('--rate', '40', '--requests', '8', '--completions', '--no-stream');
  assertAllSucceeded(r, 8);
  assert.equal(r.config.mode, 'open');
  assert.equal(r.config.endpoint, 'completions');
  assert.equal(r.itl_ms.count, 0);
});

test('shared prefix: later requests hit the prefix cache', async () => {
  const r = await loadtest('--concurrency', '1', '--requests', '4', '--shared-prefix-tokens', '16');
  assertAllSucceeded(r, 4);
  assert.ok(r.cached_tokens >= 3 * 16, `cached ${r.cached_tokens}`);
});

test('multi-turn conversations send the growing history', async () => {
  const r = await loadtest('--concurrency', '2', '--requests', '6', '--turns', '3', '--prompt-tokens', '3');
  assertAllSucceeded(r, 6);
  assert.deepEqual(r.ttft_by_turn_ms.map((t) => [t.turn, t.count]), [[1, 2], [2, 2], [3, 2]]);
  // Each turn resends the conversation so far: the mean prompt grows with the turns.
  assert.ok(r.prompt_tokens > 6 * 3 * 3);
  assert.ok(r.cached_tokens > 0);  // the history is a prefix of the next turn
});

test('multi-turn through the sessions API', async () => {
  const r = await loadtest('--concurrency', '2', '--requests', '4', '--turns', '2', '--sessions', '--prompt-tokens', '3');
  assertAllSucceeded(r, 4);
  assert.equal(r.config.sessions, true);
});

test('a wrong model name: every request counted as an HTTP 404 error', async () => {
  const r = await loadtest('--concurrency', '2', '--requests', '5', '--model', 'no-such-model');
  assert.deepEqual(r.requests, { total: 5, succeeded: 0, failed: 5 });
  assert.deepEqual(r.errors.by_status, { 404: 5 });
  assert.deepEqual(r.errors.by_kind, { http: 5 });
  assert.match(r.errors.examples[0], /no-such-model/);
  assert.equal(r.ttft_ms.count, 0);
});

test('an unreachable server is a clear failure', async () => {
  await assert.rejects(run(binary, ['loadtest', '--url', 'http://127.0.0.1:1', '--requests', '1']),
    (e) => e.code === 1 && /cannot reach/.test(e.stderr));
});
