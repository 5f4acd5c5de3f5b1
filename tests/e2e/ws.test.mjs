// The WebSocket API (/v1/ws) with the `ws` client.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, makeSlowModel, sleep } from './server.mjs';

let server;
let slow;
let slowServer;
before(async () => {
  server = await startServer();
  slow = makeSlowModel();
  slowServer = await startServer(['-m', slow.path]);
});
after(async () => {
  assert.equal((await server.stop()).code, 0);
  assert.equal((await slowServer.stop()).code, 0);
  slow.remove();
});

// A socket whose incoming JSON messages can be awaited one by one.
async function connect(url, query = '') {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/ws${query}`);
  const queue = [];
  const waiters = [];
  ws.on('message', (data, binary) => {
    assert.equal(binary, false);
    const m = JSON.parse(data.toString());
    const w = waiters.shift();
    if (w) w(m); else queue.push(m);
  });
  // The close code and reason the server sent.
  const closed = new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
  const next = () => (queue.length ? Promise.resolve(queue.shift()) : new Promise((r) => waiters.push(r)));
  // Collects one answer: its text chunks and the final message.
  async function answer() {
    let text = '';
    for (;;) {
      const m = await next();
      if (m.error || m.finished) return { text, end: m };
      assert.equal(m.finished, false);
      text += m.text;
    }
  }
  return { ws, next, answer, closed, send: (o) => ws.send(typeof o === 'string' ? o : JSON.stringify(o)) };
}

test('streams an answer and ends it with usage; several requests on one socket', async () => {
  const httpAnswer = await (await fetch(`${server.url}/v1/completions`, { method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'Once upon a time', max_tokens: 30, temperature: 0 }) })).json();
  const c = await connect(server.url);
  for (let i = 0; i < 2; i++) {
    c.send({ prompt: 'Once upon a time', max_tokens: 30, temperature: 0, id: `r${i}` });
    const { text, end } = await c.answer();
    assert.equal(text, httpAnswer.choices[0].text);
    assert.equal(end.finished, true);
    assert.equal(end.id, `r${i}`);
    assert.equal(end.finish_reason, httpAnswer.choices[0].finish_reason);
    assert.equal(end.usage.completion_tokens, httpAnswer.usage.completion_tokens);
  }
  c.send({ messages: [{ role: 'user', content: 'Hello' }], max_tokens: 10, temperature: 0 });
  const chat = await c.answer();
  assert.ok(chat.end.finished && chat.text.length > 0);
  // A session id names a stored conversation (docs/api.md): an unknown one is an error, the socket stays open.
  c.send({ messages: [{ role: 'user', content: 'Hello' }], max_tokens: 10, session_id: 'no-such-session' });
  const missing = await c.next();
  assert.equal(missing.error.code, 'session_not_found');
  c.ws.close();
});

test('errors come as {"error"}, finished, with a request id, and the socket stays open', async () => {
  const c = await connect(server.url);
  const ended = async () => {
    const m = await c.next();
    assert.equal(m.finished, true, JSON.stringify(m));
    assert.match(m.request_id, /^req_[0-9a-f]{24}$/);
    return m;
  };
  c.send('{not json');
  assert.equal((await ended()).error.code, 'invalid_json');
  c.send({ prompt: 'x', temperature: -1, id: 'a' });
  const bad = await ended();
  assert.deepEqual([bad.error.param, bad.id], ['temperature', 'a']);
  c.send({ max_tokens: 3 });
  assert.equal((await ended()).error.param, 'prompt');
  c.send({ prompt: 'Once '.repeat(600), max_tokens: 3 });
  assert.equal((await ended()).error.code, 'context_length_exceeded');
  c.send({ prompt: 'Once', max_tokens: 3 });
  assert.equal((await c.answer()).end.finished, true);
  c.ws.close();
});

test('cancel stops the running answer; a second request while busy is refused', async () => {
  const c = await connect(slowServer.url);
  c.send({ prompt: 'Once', max_tokens: 3000, ignore_eos: true });
  assert.equal((await c.next()).finished, false);  // it is running
  c.send({ prompt: 'Twice', max_tokens: 3 });
  let busy = await c.next();
  while (!busy.error) busy = await c.next();  // skip the running answer's chunks
  assert.equal(busy.error.code, 'busy');
  assert.equal(busy.finished, true, 'the refused request ended');
  c.send({ cancel: true });
  const { end } = await c.answer();
  assert.equal(end.finish_reason, 'cancelled');
  assert.ok(end.usage.completion_tokens < 3000);
  c.ws.close();
});

test('ping is answered with pong', async () => {
  const c = await connect(server.url);
  const pong = new Promise((resolve) => c.ws.once('pong', (d) => resolve(d.toString())));
  c.ws.ping('hello');
  assert.equal(await pong, 'hello');
  c.ws.close();
});

test('messages pass the checks HTTP requests pass: key-bound sessions, validation, blocklist', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-ws-'));
  const blocklist = join(dir, 'blocklist.txt');
  writeFileSync(blocklist, 'forbidden\\s+words\n');
  const keyed = await startServer(['--api-key', 'ka', '--api-key', 'kb', '--blocklist', blocklist,
    '--max-messages', '2', '--rate-limit-tpm', '100000']);
  try {
    const create = (key) => fetch(`${keyed.url}/v1/sessions`, { method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: '{}' }).then((r) => r.json());
    const alphaSession = await create('ka');
    const a = await connect(keyed.url, '?api_key=ka');
    a.send({ session_id: alphaSession.id, messages: [{ role: 'user', content: 'Hello' }], max_tokens: 8, temperature: 0 });
    const turn = await a.answer();
    assert.equal(turn.end.finished, true, JSON.stringify(turn.end));
    // The key's own session continues; another key cannot see it, over the socket either.
    const b = await connect(keyed.url, '?api_key=kb');
    b.send({ session_id: alphaSession.id, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 8 });
    assert.equal((await b.next()).error.code, 'session_not_found');
    a.send({ messages: [{ role: 'user', content: 'say forbidden   words' }], max_tokens: 8 });
    assert.equal((await a.next()).error.code, 'content_policy_violation');
    a.send({ messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }, { role: 'user', content: 'c' }] });
    assert.equal((await a.next()).error.code, 'too_many_messages');
    a.send({ prompt: 'Once', max_tokens: 8, temperature: 0 });
    assert.equal((await a.answer()).end.finished, true);  // the socket is still usable
    a.ws.close();
    b.ws.close();
  } finally {
    assert.equal((await keyed.stop()).code, 0);
    rmSync(dir, { recursive: true, force: true });
  }
});

const logLines = (s) => s.stderr().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));

test('each request gets its own request id: in its end message and its request_finished log line', async () => {
  const c = await connect(server.url);
  const ids = [];
  for (let i = 0; i < 2; i++) {
    c.send({ prompt: 'Once', max_tokens: 4, temperature: 0.8 });  // not cached: the engine runs it
    const { end } = await c.answer();
    assert.equal(end.finished, true);
    assert.match(end.request_id, /^req_[0-9a-f]{24}$/);
    ids.push(end.request_id);
  }
  assert.notEqual(ids[0], ids[1]);
  const logged = (id) => logLines(server).find((l) => l.event === 'request_finished' && l.request_id === id);
  for (let i = 0; i < 100 && !ids.every(logged); i++) await sleep(20);
  for (const id of ids) assert.equal(logged(id)?.completion_tokens, 4, id);
  c.ws.close();
});

test('a message over --max-body-bytes gets the 413 error, then close code 1009', async () => {
  const small = await startServer(['--max-body-bytes', '1000']);
  try {
    const oneFrame = (ws) => ws.send('x'.repeat(1 << 20));  // still being sent when it is refused
    const fragments = (ws) => { ws.send('a'.repeat(600), { fin: false }); ws.send('a'.repeat(600)); };
    for (const send of [oneFrame, fragments]) {
      const c = await connect(small.url);
      send(c.ws);
      assert.deepEqual((await c.next()).error,
        { message: 'The request body exceeds 1000 bytes', type: 'invalid_request_error', param: null, code: 'request_too_large' });
      assert.deepEqual(await c.closed, { code: 1009, reason: 'message too big' });
    }
    const c = await connect(small.url);
    const request = JSON.stringify({ prompt: 'Once', max_tokens: 2 });
    c.send(request + ' '.repeat(1000 - request.length));  // exactly the limit
    assert.equal((await c.answer()).end.finished, true);
    c.ws.close();
  } finally {
    assert.equal((await small.stop()).code, 0);
  }
});

test('--ws-idle-timeout closes a socket with no request (1001) although it answers pings', async () => {
  const short = await startServer(['--idle-timeout', '1', '--ws-idle-timeout', '2']);
  try {
    const c = await connect(short.url);
    let pings = 0;
    c.ws.on('ping', () => { pings++; });
    c.send({ prompt: 'Once', max_tokens: 2 });
    assert.equal((await c.answer()).end.finished, true);
    const t0 = Date.now();
    assert.deepEqual(await c.closed, { code: 1001, reason: 'idle timeout' });
    const waited = Date.now() - t0;
    assert.ok(waited > 1500 && waited < 5000, `closed after ${waited} ms`);
    assert.ok(pings >= 2, `${pings} pings`);  // every half --idle-timeout
  } finally {
    assert.equal((await short.stop()).code, 0);
  }
});

test('SIGTERM: idle sockets close with 1001 at once; a running answer ends "cancelled", then 1001', async () => {
  const draining = await startServer(['-m', slow.path, '--shutdown-grace', '0.5']);
  const running = await connect(draining.url);
  const idle = await connect(draining.url);
  running.send({ prompt: 'Once', max_tokens: 3000, ignore_eos: true, id: 'long' });
  assert.equal((await running.next()).finished, false);
  const order = [];
  idle.closed.then(() => order.push('idle closed'));
  draining.proc.kill('SIGTERM');
  assert.deepEqual(await idle.closed, { code: 1001, reason: 'server shutting down' });
  const { end } = await running.answer();
  order.push('answer ended');
  assert.equal(end.finish_reason, 'cancelled');
  assert.equal(end.id, 'long');
  assert.deepEqual(await running.closed, { code: 1001, reason: 'server shutting down' });
  assert.deepEqual(order, ['idle closed', 'answer ended']);  // not after the grace period
  assert.equal((await draining.exited).code, 0);
});
