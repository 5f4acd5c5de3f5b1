// Connection caps (docs/security.md, "Connection limits"): a flood of idle
// connections past --max-connections evicts the longest-idle ones instead of
// locking normal clients out, and one address past --max-connections-per-ip is
// refused while the others are served.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import WebSocket from 'ws';
import { startServer, makeSlowModel, sleep, stats } from './server.mjs';

let slow;
before(() => { slow = makeSlowModel(); });
after(() => slow.remove());

// Opens `n` idle TCP connections from `localAddress`; each records whether the server closed it.
async function openIdle(port, n, localAddress = '127.0.0.1') {
  const sockets = await Promise.all(Array.from({ length: n }, () => new Promise((resolve, reject) => {
    const s = net.connect({ port, host: '127.0.0.1', localAddress }, () => resolve(s));
    s.on('error', (e) => { if (!s.connecting) return; reject(e); });
    s.closedByServer = false;
    s.on('close', () => { s.closedByServer = true; });
  })));
  return { sockets, closed: () => sockets.filter((s) => s.closedByServer).length,
    destroy: () => sockets.forEach((s) => s.destroy()) };
}

async function until(predicate, ms = 5000) {
  const end = Date.now() + ms;
  while (!predicate() && Date.now() < end) await sleep(10);
  return predicate();
}

// GET on a new connection; resolves with the status and the milliseconds it took.
function timedGet(port, path, localAddress = '127.0.0.1') {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path, localAddress, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, ms: performance.now() - t0 }));
    }).on('error', reject);
  });
}

async function metric(url, name) {
  return (await stats(url))[name];
}

function openWebSocket(url) {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/ws`);
  ws.closed = new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  return new Promise((resolve, reject) => { ws.once('open', () => resolve(ws)); ws.once('error', reject); });
}

test('a flood of 200 idle connections past --max-connections 64 evicts the longest-idle; a request still answers at once', async () => {
  const server = await startServer(['--max-connections', '64']);
  const flood = await openIdle(server.port, 200);
  try {
    // Each connection past the cap took the place of the longest-idle one.
    assert.ok(await until(() => flood.closed() === 200 - 64), `closed by the server: ${flood.closed()}`);
    const { status, ms } = await timedGet(server.port, '/health');
    assert.equal(status, 200);
    assert.ok(ms < 100, `answered in ${ms.toFixed(1)} ms`);
    assert.equal(await metric(server.url, 'max_connections'), 64);
    assert.ok(await metric(server.url, 'connections_evicted') >= 200 - 64 + 1);
    assert.equal(await metric(server.url, 'connections_refused'), 0);
    assert.ok(await metric(server.url, 'connections') <= 64 + 2);  // + evictions still closing
  } finally {
    flood.destroy();
    assert.equal((await server.stop()).code, 0);
  }
});

test('an idle WebSocket gives its place up (1001), one with a running answer keeps it; all busy: refused', async () => {
  const server = await startServer(['-m', slow.path, '--max-connections', '4']);
  try {
    const idle = await openWebSocket(server.url);
    const busy = await openWebSocket(server.url);
    const messages = [];
    busy.on('message', (d) => messages.push(JSON.parse(d.toString())));
    busy.send(JSON.stringify({ prompt: 'Once', max_tokens: 3000, ignore_eos: true }));
    assert.ok(await until(() => messages.length > 0), 'the answer runs');
    // 8 connections for 4 places: the idle WebSocket and 3 flood sockets make room.
    const flood = await openIdle(server.port, 6);
    assert.deepEqual(await idle.closed, { code: 1001, reason: 'connection limit reached' });
    assert.ok(await until(() => flood.closed() === 3), `flood sockets closed: ${flood.closed()}`);
    assert.equal(busy.readyState, WebSocket.OPEN);
    assert.ok(messages.every((m) => m.finished === false), 'still streaming');
    // The flood sockets left start requests (the 100 Continue says the header was read): nothing is idle.
    const left = flood.sockets.filter((s) => !s.closedByServer);
    await Promise.all(left.map((s) => new Promise((resolve) => {
      s.once('data', resolve);
      s.write('POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\n');
    })));
    const extra = await openIdle(server.port, 1);
    assert.ok(await until(() => extra.closed() === 1), 'a connection with every place busy is refused');
    // Their requests end (400: no prompt): idle again, one makes room for the /v1/stats request.
    await Promise.all(left.map((s) => new Promise((resolve) => {
      s.once('data', resolve);
      s.write('{"a":1234}');
    })));
    const s = await stats(server.url);
    assert.equal(s.connections_refused, 1);
    assert.equal(s.connections_evicted, 5);
    flood.destroy();
    busy.close();
  } finally {
    assert.equal((await server.stop()).code, 0);
  }
});

test('a flood from 127.0.0.2 past --max-connections-per-ip is refused while 127.0.0.1 is served', async () => {
  const server = await startServer(['--max-connections-per-ip', '8']);
  const flood = await openIdle(server.port, 50, '127.0.0.2');
  try {
    assert.ok(await until(() => flood.closed() === 50 - 8), `closed by the server: ${flood.closed()}`);
    const { status, ms } = await timedGet(server.port, '/health');
    assert.equal(status, 200);
    assert.ok(ms < 100, `answered in ${ms.toFixed(1)} ms`);
    await assert.rejects(timedGet(server.port, '/health', '127.0.0.2'));
    assert.equal(await metric(server.url, 'connections_refused_per_ip'), 50 - 8 + 1);
    assert.equal(await metric(server.url, 'connections_evicted'), 0);
  } finally {
    flood.destroy();
    assert.equal((await server.stop()).code, 0);
  }
});

test('--trusted-proxy peers are exempt from --max-connections-per-ip', async () => {
  const server = await startServer(['--max-connections-per-ip', '2', '--trusted-proxy', '127.0.0.3']);
  const proxy = await openIdle(server.port, 6, '127.0.0.3');
  const client = await openIdle(server.port, 3, '127.0.0.2');
  try {
    assert.ok(await until(() => client.closed() === 1), `closed by the server: ${client.closed()}`);
    const s = await stats(server.url);
    assert.equal(s.connections_refused_per_ip, 1);
    assert.equal(s.connections, 6 + 2 + 1);  // with the /v1/stats request's own
    assert.equal(proxy.closed(), 0);
  } finally {
    proxy.destroy();
    client.destroy();
    assert.equal((await server.stop()).code, 0);
  }
});
