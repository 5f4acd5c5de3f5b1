// Cancellation on disconnect, graceful shutdown (SIGTERM), and configuration.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, makeSlowModel, waitForStats, stats, readSse, binary, sleep } from './server.mjs';

let slow;
before(() => { slow = makeSlowModel(); });
after(() => slow.remove());

const longRequest = { prompt: 'Once', max_tokens: 3000, ignore_eos: true, stream: true };

function postJson(url, body, signal) {
  return fetch(`${url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body), signal });
}

test('a client that disconnects mid-stream cancels its request and frees its KV blocks', async () => {
  const server = await startServer(['-m', slow.path]);
  try {
    const abort = new AbortController();
    const r = await postJson(server.url, longRequest, abort.signal);
    const reader = r.body.getReader();
    await reader.read();  // the first chunk: it is running
    const running = await stats(server.url);
    assert.equal(running.running, 1);
    assert.ok(running.kv_blocks_used > 0);
    abort.abort();
    const s = await waitForStats(server.url, (x) => x.requests_cancelled === 1 && x.kv_blocks_used === 0);
    assert.equal(s.requests_cancelled, 1);
    assert.equal(s.running, 0);
    assert.equal(s.kv_blocks_used, 0);
    assert.ok(s.generated_tokens < 3000);

    // A non-streamed request whose client leaves is cancelled too.
    const socket = net.connect(server.port, '127.0.0.1');
    const body = JSON.stringify({ ...longRequest, stream: false });
    socket.write(`POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${body.length}\r\n\r\n${body}`);
    await waitForStats(server.url, (x) => x.running === 1);
    socket.destroy();
    const s2 = await waitForStats(server.url, (x) => x.requests_cancelled === 2 && x.kv_blocks_used === 0);
    assert.equal(s2.requests_cancelled, 2);
    assert.equal(s2.kv_blocks_used, 0);
  } finally {
    assert.equal((await server.stop()).code, 0);
  }
});

// GET through one keep-alive socket (a new connection is refused once draining).
function getVia(agent, port, path) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path, agent }, (res) => {
      let data = '';
      res.on('data', (d) => { data += d; });
      res.on('end', () => resolve({ status: res.statusCode, body: data }));
    }).on('error', reject);
  });
}

test('SIGTERM: /ready turns 503 at once, requests in flight finish, exit 0', async () => {
  const server = await startServer(['-m', slow.path, '--shutdown-grace', '20']);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  assert.equal((await getVia(agent, server.port, '/ready')).status, 200);
  const streams = await Promise.all([0, 1, 2].map(() => postJson(server.url, { ...longRequest, max_tokens: 600 })));
  await waitForStats(server.url, (x) => x.running === 3);
  server.proc.kill('SIGTERM');
  await sleep(50);
  assert.equal((await getVia(agent, server.port, '/ready')).status, 503);
  const refused = await new Promise((resolve) => {
    const s = net.connect(server.port, '127.0.0.1', () => { s.destroy(); resolve(false); });
    s.on('error', (e) => resolve(e.code === 'ECONNREFUSED'));
  });
  assert.ok(refused, 'new connections are refused');
  for (const r of streams) {
    const events = await readSse(r);
    assert.equal(events.at(-1), '[DONE]');
    assert.equal(events.at(-2).choices[0].finish_reason, 'length');
  }
  assert.equal((await server.exited).code, 0);
  agent.destroy();
});

test('SIGTERM: what outlives the grace period is cancelled with a clean end', async () => {
  const server = await startServer(['-m', slow.path, '--shutdown-grace', '0.3']);
  const streams = await Promise.all([0, 1].map(() => postJson(server.url, longRequest)));
  await waitForStats(server.url, (x) => x.running === 2);
  const t0 = Date.now();
  server.proc.kill('SIGTERM');
  for (const r of streams) {
    const events = await readSse(r);
    assert.equal(events.at(-1), '[DONE]');
    assert.equal(events.at(-2).choices[0].finish_reason, 'cancelled');
  }
  assert.equal((await server.exited).code, 0);
  assert.ok(Date.now() - t0 < 5000);
});

test('configuration: flags > PARLEY_* environment > --config file > defaults; --help lists all', async () => {
  const help = execFileSync(binary, ['serve', '--help']).toString();
  for (const flag of ['--host', '--port', '--io-threads', '--max-body-bytes', '--idle-timeout', '--shutdown-grace',
    '--config', '--model', '--threads', '--max-running', '--max-batch-tokens', '--max-step-ms', '--kv-memory', '--kv-type',
    '--model-id', '--max-n', '--ws-idle-timeout', '--max-connections', '--max-connections-per-ip']) assert.ok(help.includes(flag), flag);
  assert.ok(help.includes('PARLEY_PORT'));
  const dir = mkdtempSync(join(tmpdir(), 'parley-cfg-'));
  const config = join(dir, 'serve.json');
  writeFileSync(config, JSON.stringify({ 'model-id': 'from-file', max_n: 2, 'kv-type': 'f32' }));
  const modelId = async (args, env) => {
    const server = await startServer(['--config', config, ...args], env);
    const { data } = await (await fetch(`${server.url}/v1/models`)).json();
    const n3 = await fetch(`${server.url}/v1/completions`, { method: 'POST',
      headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'a', n: 3, max_tokens: 1 }) });
    assert.equal((await server.stop()).code, 0);
    return [data[0].id, n3.status];
  };
  try {
    assert.deepEqual(await modelId([], {}), ['from-file', 400]);  // max_n 2 from the file
    assert.deepEqual(await modelId([], { PARLEY_MODEL_ID: 'from-env', PARLEY_MAX_N: '3' }), ['from-env', 200]);
    assert.deepEqual(await modelId(['--model-id', 'from-flag'], { PARLEY_MODEL_ID: 'from-env' }), ['from-flag', 400]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
