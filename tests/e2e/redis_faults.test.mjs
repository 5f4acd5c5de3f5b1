// Session turn locks through Redis faults, with real `parley serve` replicas
// and a real redis-server writing an AOF: a turn's lock is a short lease
// (--session-lock-lease) renewed while the turn runs, so a lock that Redis
// restores after a crash (kill -9, then a restart from its AOF) although its
// turn ended meanwhile frees within one lease.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, makeRandomModel, sleep, waitForStats } from './server.mjs';
import { startRedis } from './services.mjs';

const leaseS = 3;

const post = (url, path, body, signal) =>
  fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal });

test('a running turn keeps its lock past the lease; the lock Redis restores after kill -9 frees within the lease', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-redis-faults-'));
  // About 150 tokens per second on one thread: a turn of 3500 tokens outlasts the lease.
  const model = makeRandomModel('slower', ['--dim', '1024', '--layers', '8', '--heads', '8']);
  let redis = await startRedis(dir, { appendonly: true });
  const args = ['-m', model.path, '--redis-url', redis.url, '--session-lock-lease', String(leaseS)];
  const servers = [];
  const aborter = new AbortController();
  try {
    const a = await startServer(args);
    servers.push(a);
    const session = await (await post(a.url, '/v1/sessions', {})).json();
    const turn = (url, extra = {}, signal) => post(url, '/v1/chat/completions', {
      session_id: session.id, messages: [{ role: 'user', content: 'Tell me a long story.' }], max_tokens: 4,
      cache: false, ...extra,
    }, signal);

    const long = await turn(a.url, { max_tokens: 3500, ignore_eos: true, stream: true }, aborter.signal);
    assert.equal(long.status, 200);
    let ended = false;
    const reading = (async () => {
      const reader = long.body.getReader();
      try {
        while (!(await reader.read()).done);
      } catch { /* aborted */ }
      ended = true;
    })();
    await sleep((leaseS + 1) * 1000);
    assert.ok(!ended, 'the long turn ended within the lease: this test needs a slower model');
    const busy = await turn(a.url);
    assert.equal(busy.status, 409, 'renewed: the lock outlived its first lease');
    assert.equal((await busy.json()).error.code, 'session_busy');

    await redis.kill();
    aborter.abort();  // the turn ends while Redis is down: Redis misses its unlock
    await reading;
    await waitForStats(a.url, (st) => st.generations === 0);
    redis = await startRedis(dir, { port: redis.port, appendonly: true });
    const restarted = Date.now();
    const held = execFileSync('redis-cli', ['-p', String(redis.port), 'EXISTS', `parley:lock:session:${session.id}`]);
    assert.equal(held.toString().trim(), '1', 'the AOF brought the lock back');

    // A replica that never saw Redis fail: its turns go through Redis (without
    // it they would be 404: it knows the session only from there).
    const b = await startServer(args);
    servers.push(b);
    let r = await turn(b.url);
    while (r.status === 409 && Date.now() - restarted < (leaseS + 2) * 1000) {
      await r.text();
      await sleep(100);
      r = await turn(b.url);
    }
    assert.equal(r.status, 200, await r.text());
  } finally {
    aborter.abort();
    for (const s of servers) await s.stop();
    await redis.stop();
    model.remove();
    rmSync(dir, { recursive: true, force: true });
  }
});
