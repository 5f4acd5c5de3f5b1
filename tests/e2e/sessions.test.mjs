// Server-side sessions (/v1/sessions and chat with session_id) against real
// `parley serve` processes: history, trimming, TTL, concurrent turns,
// persistence in SQLite across a restart, and two replicas sharing a real
// redis-server that is killed and restarted under load.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { startServer, binary, sleep } from './server.mjs';

let server;
let dir;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'parley-sessions-'));
  server = await startServer();
});
after(async () => {
  assert.equal((await server.stop()).code, 0);
  rmSync(dir, { recursive: true, force: true });
});

const post = (url, path, body) =>
  fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const getJson = async (url, path) => {
  const r = await fetch(`${url}${path}`);
  return { status: r.status, body: await r.json() };
};

async function createSession(url, body = {}) {
  const r = await post(url, '/v1/sessions', body);
  assert.equal(r.status, 201);
  return r.json();
}

// One turn; `cache: false` so that every turn really runs the engine.
const turn = (url, id, content, extra = {}) =>
  post(url, '/v1/chat/completions', {
    session_id: id, messages: [{ role: 'user', content }], max_tokens: 12, temperature: 0, cache: false, ...extra,
  });

async function okTurn(url, id, content, extra) {
  const r = await turn(url, id, content, extra);
  const body = await r.json();
  assert.equal(r.status, 200, JSON.stringify(body));
  return body;
}

test('create, get, list with pages, delete', async () => {
  const s = await createSession(server.url, { user: 'alice', system_prompt: 'Be kind.', max_turns: 3, ttl_s: 600 });
  assert.match(s.id, /^[0-9a-f]{32}$/);
  assert.equal(s.object, 'session');
  assert.equal(s.user, 'alice');
  assert.equal(s.system_prompt, 'Be kind.');
  assert.equal(s.max_turns, 3);
  assert.equal(s.ttl_s, 600);
  assert.ok(s.expires_at - s.created_at >= 599);
  assert.deepEqual(s.turns, []);
  const got = await getJson(server.url, `/v1/sessions/${s.id}`);
  assert.equal(got.status, 200);
  assert.equal(got.body.id, s.id);
  assert.deepEqual(got.body.turns, []);

  const user = `pager ${Date.now()}`;
  const ids = [];
  for (let i = 0; i < 3; ++i) ids.push((await createSession(server.url, { user })).id);
  const q = encodeURIComponent(user);
  const first = await getJson(server.url, `/v1/sessions?user=${q}&limit=2`);
  assert.equal(first.status, 200);
  assert.equal(first.body.object, 'list');
  assert.equal(first.body.data.length, 2);
  assert.equal(first.body.has_more, true);
  const second = await getJson(server.url, `/v1/sessions?user=${q}&limit=2&after=${encodeURIComponent(first.body.next_cursor)}`);
  assert.equal(second.body.data.length, 1);
  assert.equal(second.body.has_more, false);
  const listed = [...first.body.data, ...second.body.data].map((x) => x.id);
  assert.deepEqual([...listed].sort(), [...ids].sort());
  assert.ok(first.body.data.every((x) => x.user === user && x.turns === undefined));

  const del = await fetch(`${server.url}/v1/sessions/${s.id}`, { method: 'DELETE' });
  assert.equal(del.status, 200);
  assert.deepEqual(await del.json(), { id: s.id, object: 'session.deleted', deleted: true });
  const gone = await getJson(server.url, `/v1/sessions/${s.id}`);
  assert.equal(gone.status, 404);
  assert.equal(gone.body.error.code, 'session_not_found');
  assert.equal((await fetch(`${server.url}/v1/sessions/${s.id}`, { method: 'DELETE' })).status, 404);
  assert.equal((await turn(server.url, s.id, 'Hi')).status, 404);
  assert.equal((await getJson(server.url, '/v1/sessions?limit=0')).status, 400);
  for (const after of ['abc', '.', '-5.', '-5.x', '99999999999999999999999.x', '12']) {
    const bad = await getJson(server.url, `/v1/sessions?after=${encodeURIComponent(after)}`);
    assert.equal(bad.status, 400, after);
    assert.equal(bad.body.error.param, 'after', after);
  }
});

test('turns use and grow the history; only the new user message is accepted', async () => {
  const s = await createSession(server.url, { system_prompt: 'You tell stories.' });
  const t1 = await okTurn(server.url, s.id, 'Tell me about a cat.');
  assert.equal(t1.session_id, s.id);
  const t2 = await okTurn(server.url, s.id, 'What did the cat do?');
  // The second prompt holds the first turn: its question and its answer.
  assert.ok(t2.usage.prompt_tokens > t1.usage.prompt_tokens + t1.usage.completion_tokens,
    `${t2.usage.prompt_tokens} vs ${t1.usage.prompt_tokens} + ${t1.usage.completion_tokens}`);
  const { body } = await getJson(server.url, `/v1/sessions/${s.id}`);
  assert.deepEqual(body.turns.map((t) => [t.user, t.assistant]), [
    ['Tell me about a cat.', t1.choices[0].message.content],
    ['What did the cat do?', t2.choices[0].message.content],
  ]);
  for (const messages of [
    [{ role: 'user', content: 'a' }, { role: 'user', content: 'b' }],
    [{ role: 'system', content: 'a' }],
  ]) {
    const r = await post(server.url, '/v1/chat/completions', { session_id: s.id, messages });
    assert.equal(r.status, 400);
    assert.equal((await r.json()).error.param, 'messages');
  }
  assert.equal((await turn(server.url, s.id, 'x', { n: 2 })).status, 400);
  // A rejected request stored nothing and left the session unlocked.
  assert.equal((await getJson(server.url, `/v1/sessions/${s.id}`)).body.turns.length, 2);
  await okTurn(server.url, s.id, 'And then?');
});

test('streamed turns and WebSocket turns are stored too', async () => {
  const s = await createSession(server.url);
  const r = await turn(server.url, s.id, 'Sing a song.', { stream: true });
  assert.equal(r.status, 200);
  const events = (await r.text()).split('\n\n').filter((b) => b.startsWith('data: {')).map((b) => JSON.parse(b.slice(6)));
  assert.ok(events.every((e) => e.session_id === s.id));
  const streamed = events.map((e) => e.choices[0]?.delta?.content ?? '').join('');
  const ws = new WebSocket(`${server.url.replace('http', 'ws')}/v1/ws`);
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
  let text = '';
  const end = await new Promise((resolve) => {
    ws.on('message', (d) => {
      const m = JSON.parse(d.toString());
      if (m.finished || m.error) resolve(m); else text += m.text;
    });
    ws.send(JSON.stringify({ session_id: s.id, messages: [{ role: 'user', content: 'Again!' }], max_tokens: 12, temperature: 0 }));
  });
  ws.close();
  assert.equal(end.session_id, s.id, JSON.stringify(end));
  const { body } = await getJson(server.url, `/v1/sessions/${s.id}`);
  assert.deepEqual(body.turns.map((t) => [t.user, t.assistant]), [['Sing a song.', streamed], ['Again!', text]]);
});

test('trimming keeps the last max_turns turns', async () => {
  const s = await createSession(server.url, { max_turns: 2 });
  const prompts = [];
  for (const q of ['One?', 'Two?', 'Three?', 'Four?']) prompts.push((await okTurn(server.url, s.id, q)).usage.prompt_tokens);
  const { body } = await getJson(server.url, `/v1/sessions/${s.id}`);
  assert.deepEqual(body.turns.map((t) => t.user), ['Three?', 'Four?']);
  assert.ok(prompts[1] > prompts[0]);
});

test('trimming fits the context: oldest turns go, the prompt plus max_tokens fits', async () => {
  const path = join(dir, 'tiny.gguf');
  execFileSync(binary, ['mkmodel', '--dim', '64', '--layers', '1', '--heads', '2', '--ctx', '128', '--type', 'f32', '-o', path],
    { stdio: 'ignore' });
  const tiny = await startServer(['-m', path]);
  try {
    const s = await createSession(tiny.url, { system_prompt: 'Short.', max_turns: 50 });
    const long = 'tell me a long story about a little dog and a big cat';
    let lastPrompt = 0;
    for (let i = 0; i < 6; ++i) {
      const t = await okTurn(tiny.url, s.id, `${long} ${i}`, { max_tokens: 24, ignore_eos: true });
      assert.ok(t.usage.prompt_tokens + 24 <= 128, `turn ${i}: ${t.usage.prompt_tokens} prompt tokens`);
      lastPrompt = t.usage.prompt_tokens;
    }
    const { body } = await getJson(tiny.url, `/v1/sessions/${s.id}`);
    assert.equal(body.turns.length, 6);  // stored whole; only the prompt is trimmed
    assert.ok(lastPrompt > 0);
  } finally {
    await tiny.stop();
  }
});

test('sessions expire after their TTL', async () => {
  const s = await createSession(server.url, { ttl_s: 1 });
  assert.equal((await getJson(server.url, `/v1/sessions/${s.id}`)).status, 200);
  await sleep(2100);
  assert.equal((await getJson(server.url, `/v1/sessions/${s.id}`)).status, 404);
  assert.equal((await turn(server.url, s.id, 'Still there?')).status, 404);
});

test('20 concurrent turns on one session: each 200 or 409, the history holds exactly the successes in order', async () => {
  const s = await createSession(server.url, { max_turns: 100 });
  const results = await Promise.all(Array.from({ length: 20 }, async (_, i) => {
    const r = await turn(server.url, s.id, `question ${i}`, { max_tokens: 48, ignore_eos: true });
    return { i, status: r.status, body: await r.json() };
  }));
  for (const r of results) assert.ok([200, 409].includes(r.status), JSON.stringify(r.body));
  const ok = results.filter((r) => r.status === 200);
  assert.ok(ok.length >= 1);
  assert.ok(results.filter((r) => r.status === 409).every((r) => r.body.error.code === 'session_busy'));
  const { body } = await getJson(server.url, `/v1/sessions/${s.id}`);
  assert.equal(body.turns.length, ok.length);
  const answers = new Map(ok.map((r) => [`question ${r.i}`, r.body.choices[0].message.content]));
  for (const t of body.turns) assert.equal(t.assistant, answers.get(t.user), `turn ${t.user} interleaved`);
  assert.equal(new Set(body.turns.map((t) => t.user)).size, ok.length);
});

test('sessions survive a restart with --state-db', async () => {
  const db = join(dir, 'state.db');
  const a = await startServer(['--state-db', db]);
  const s = await createSession(a.url, { system_prompt: 'Remember me.' });
  const t1 = await okTurn(a.url, s.id, 'My name is Tom.');
  assert.equal((await a.stop()).code, 0);
  const b = await startServer(['--state-db', db]);
  try {
    const { status, body } = await getJson(b.url, `/v1/sessions/${s.id}`);
    assert.equal(status, 200);
    assert.equal(body.system_prompt, 'Remember me.');
    assert.deepEqual(body.turns.map((t) => [t.user, t.assistant]), [['My name is Tom.', t1.choices[0].message.content]]);
    await okTurn(b.url, s.id, 'What is my name?');
    assert.equal((await getJson(b.url, `/v1/sessions/${s.id}`)).body.turns.length, 2);
  } finally {
    await b.stop();
  }
});

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

// A real redis-server on 127.0.0.1:port, without persistence; resolves once it accepts connections.
function startRedis(port) {
  const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise((resolve) => proc.on('exit', resolve));
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error(`redis did not start: ${out}`)); }, 10000);
    proc.stdout.on('data', (d) => {
      out += d;
      if (!out.includes('Ready to accept connections')) return;
      clearTimeout(timer);
      resolve({ proc, async kill(signal = 'SIGKILL') { if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal); await exited; } });
    });
    proc.on('exit', (code) => { clearTimeout(timer); reject(new Error(`redis exited (${code}): ${out}`)); });
  });
}

test('two replicas share sessions through Redis; Redis killed and restarted under load fails no request', async () => {
  const port = await freePort();
  let redis = await startRedis(port);
  const url = `redis://127.0.0.1:${port}/0`;
  const a = await startServer(['--redis-url', url]);
  const b = await startServer(['--redis-url', url]);
  try {
    const s = await createSession(a.url, { user: 'shared' });
    const t1 = await okTurn(a.url, s.id, 'Hello from A.');
    const t2 = await okTurn(b.url, s.id, 'Hello from B.');
    const seen = (await getJson(a.url, `/v1/sessions/${s.id}`)).body;
    assert.deepEqual(seen.turns.map((t) => [t.user, t.assistant]), [
      ['Hello from A.', t1.choices[0].message.content], ['Hello from B.', t2.choices[0].message.content]]);
    assert.equal((await fetch(`${b.url}/v1/sessions/${s.id}`, { method: 'DELETE' })).status, 200);
    assert.equal((await getJson(a.url, `/v1/sessions/${s.id}`)).status, 404);

    // Load: each client creates a session on replica A and runs turns on it
    // while Redis is killed and later restarted on the same port.
    const statuses = [];
    let stop = false;
    const client = async (c) => {
      const mine = await createSession(a.url, { user: `load ${c}` });
      for (let i = 0; !stop; ++i) {
        const r = await turn(a.url, mine.id, `load ${c} turn ${i}`, { max_tokens: 4 });
        statuses.push(r.status);
        await r.text();
        const g = await fetch(`${a.url}/v1/sessions/${mine.id}`);
        statuses.push(g.status);
        await g.text();
        const n = await post(a.url, '/v1/sessions', { user: `load ${c}` });
        statuses.push(n.status);
        await n.text();
      }
    };
    const clients = [0, 1, 2, 3].map(client);
    await sleep(400);
    await redis.kill();
    await sleep(1200);
    redis = await startRedis(port);
    await sleep(1200);
    stop = true;
    await Promise.all(clients);
    const failed = statuses.filter((st) => st >= 400);
    assert.deepEqual(failed, [], `${failed.length} of ${statuses.length} requests failed`);
    assert.ok(statuses.length > 12);
    const st = await (await fetch(`${a.url}/v1/stats`)).json();
    assert.ok(st.state_fallbacks > 0, 'the outage was noticed');
  } finally {
    await a.stop();
    await b.stop();
    await redis.kill();
  }
});
