// `parley serve --redis-url` checks Redis before it starts (connect, AUTH,
// SELECT, PING) against a real password-protected redis-server: a wrong
// password, a missing one, a database out of range, nothing listening or a
// URL that does not parse stop the start with a message naming what failed
// and never the password; with --redis-optional the server starts on local
// state and reports its state backend down (/ready, /metrics, /v1/stats)
// until Redis answers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, binary, stats, sleep } from './server.mjs';
import { startRedis, freePort } from './services.mjs';

const password = 's3cret-pw';
let dir;
let redis;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'parley-redis-startup-'));
  redis = await startRedis(dir, { password });
});
after(async () => {
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const redisUrl = (userinfo, db = 0, port = redis.port) => `redis://${userinfo}127.0.0.1:${port}/${db}`;

function serveOnce(url) {
  return spawnSync(binary, ['serve', '--host', '127.0.0.1', '--port', '0', '--threads', '1', '--redis-url', url],
    { encoding: 'utf8', timeout: 30000 });
}

const createSession = (url) =>
  fetch(`${url}/v1/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });

async function backend(url) {
  const ready = await fetch(`${url}/ready`);
  const metrics = await (await fetch(`${url}/metrics`)).text();
  return {
    ready: ready.status,
    state: (await ready.json()).state_backend,
    metric: Number(metrics.match(/^parley_state_backend_up (\d+)$/m)?.[1]),
    stat: (await stats(url)).state_backend_up,
  };
}

test('a misconfigured --redis-url stops the start, naming what failed and not the password', async () => {
  const cases = [
    [redisUrl(':wrong-pw-1@'), 'AUTH refused', 'wrong-pw-1'],
    [redisUrl(''), 'PING answered NOAUTH', password],
    [redisUrl(`:${password}@`, 99), 'SELECT 99 refused', password],
    [redisUrl(`:${password}@`, 0, await freePort()), 'cannot connect', password],
    [`redis://:${password}@127.0.0.1:${redis.port}/zero`, "bad database 'zero'", password],
    [`redis://:${password}@127.0.0.1:port/0`, "bad port 'port'", password],
  ];
  for (const [url, named, secret] of cases) {
    const r = serveOnce(url);
    assert.notEqual(r.status, 0, `${named}: started`);
    assert.ok(r.stderr.includes(named), `${named}: ${r.stderr}`);
    assert.ok(!r.stderr.includes(secret) && !r.stdout.includes(secret), `${named}: the password shown: ${r.stderr}`);
    assert.ok(r.stderr.includes(':***@') || !url.includes('@'), r.stderr);
    assert.ok(!r.stdout.includes('listening on'), r.stdout);
  }
});

test('with --redis-optional a misconfigured Redis starts degraded: /ready 200, state backend down', async () => {
  const server = await startServer(['--redis-url', redisUrl(':wrong-pw-2@'), '--redis-optional']);
  try {
    assert.deepEqual(await backend(server.url), { ready: 200, state: 'down', metric: 0, stat: 0 });
    assert.match(server.stderr(), /warning: --redis-url redis:\/\/:\*\*\*@127\.0\.0\.1:\d+\/0: .*AUTH refused/);
    assert.ok(!server.stderr().includes('wrong-pw-2'), server.stderr());
    assert.equal((await createSession(server.url)).status, 201, 'sessions go on locally');
  } finally {
    await server.stop();
  }
});

test('--redis-optional: the state backend comes up once Redis answers', async () => {
  const late = await freePort();
  const server = await startServer(['--redis-url', redisUrl('', 0, late), '--redis-optional']);
  let lateRedis;
  try {
    assert.equal((await backend(server.url)).state, 'down');
    lateRedis = await startRedis(dir, { port: late });
    let up = false;
    for (const end = Date.now() + 5000; !up && Date.now() < end; await sleep(50)) {  // the pool's backoff: at most 2 s
      await (await createSession(server.url)).text();
      up = (await backend(server.url)).state === 'up';
    }
    assert.deepEqual(await backend(server.url), { ready: 200, state: 'up', metric: 1, stat: 1 });
  } finally {
    await server.stop();
    await lateRedis?.stop();
  }
});

test('a good --redis-url reports the backend up; without Redis it is embedded', async () => {
  const withRedis = await startServer(['--redis-url', redis.url]);
  const embedded = await startServer();
  try {
    assert.deepEqual(await backend(withRedis.url), { ready: 200, state: 'up', metric: 1, stat: 1 });
    assert.deepEqual(await backend(embedded.url), { ready: 200, state: 'embedded', metric: 1, stat: 1 });
  } finally {
    await withRedis.stop();
    await embedded.stop();
  }
});
