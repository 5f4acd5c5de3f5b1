// Route protection against a real server (docs/security.md): every route ×
// spellings of its path × no key, a plain API key and an admin key. The
// protection a request gets comes from the route it matched; a path that is
// not spelled canonically matches no route (404), so no spelling reaches a
// handler past the key check, the rate limits, the blocklist or validation.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { startServer } from './server.mjs';

const USER = 'user-secret';
const ADMIN = 'admin-secret';
let server, dir, sessionId, responseId;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'parley-routes-'));
  writeFileSync(join(dir, 'keys.json'), JSON.stringify([
    { name: 'app', key: USER }, { name: 'ops', key: ADMIN, admin: true }]));
  writeFileSync(join(dir, 'blocklist.txt'), 'forbidden\\s+words\n');
  writeFileSync(join(dir, 'answers.json'), JSON.stringify({ answers: [{ questions: ['What is Parley?'], answer: 'A server.' }] }));
  server = await startServer(['--api-keys-file', join(dir, 'keys.json'), '--blocklist', join(dir, 'blocklist.txt'),
    '--static-answers', join(dir, 'answers.json')]);
  sessionId = (await request('POST', '/v1/sessions', USER, {})).json.id;
  responseId = (await request('POST', '/v1/responses', USER, { input: 'Hi', max_output_tokens: 2 })).json.id;
});
after(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

// A raw request: the path goes out exactly as given (fetch would normalise it).
function request(method, path, key, body) {
  return new Promise((resolve, reject) => {
    const headers = { 'content-type': 'application/json' };
    if (key?.startsWith('x-api-key:')) headers['x-api-key'] = key.slice(10);
    else if (key) headers.authorization = `Bearer ${key}`;
    const data = body === undefined ? undefined : JSON.stringify(body);
    if (data !== undefined) headers['content-length'] = Buffer.byteLength(data);
    const req = http.request({ host: '127.0.0.1', port: server.port, method, path, headers }, (res) => {
      let text = '';
      res.on('data', (d) => { text += d; });
      res.on('end', () => {
        let json = null;
        try { json = JSON.parse(text); } catch { /* a page, metrics text or an SSE stream */ }
        resolve({ status: res.statusCode, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    req.end(data);
  });
}

const chat = { messages: [{ role: 'user', content: 'Hi' }], max_tokens: 2 };
// Every route of `parley serve` with the access it declares (`anthropic`:
// errors in Anthropic's shape).
const routes = () => [
  { method: 'POST', path: '/v1/chat/completions', access: 'key', body: chat },
  { method: 'POST', path: '/v1/completions', access: 'key', body: { prompt: 'Hi', max_tokens: 2 } },
  { method: 'POST', path: '/v1/messages', access: 'key', body: chat, anthropic: true },
  { method: 'POST', path: '/v1/responses', access: 'key', body: { input: 'Hi', max_output_tokens: 2 } },
  { method: 'GET', path: `/v1/responses/${responseId}`, access: 'key' },
  { method: 'DELETE', path: '/v1/responses/resp_0123456789abcdef0123456789abcdef', access: 'key' },
  { method: 'GET', path: '/v1/models', access: 'key' },
  { method: 'GET', path: '/v1/models/stories260K', access: 'key' },
  { method: 'POST', path: '/chat', access: 'key', body: { prompts: ['Hi'], max_tokens: 2 } },
  { method: 'POST', path: '/v1/embeddings', access: 'key', body: { input: 'Hi' } },
  { method: 'POST', path: '/tokenize', access: 'key', body: { content: 'Hi' } },
  { method: 'POST', path: '/detokenize', access: 'key', body: { tokens: [1] } },
  { method: 'POST', path: '/apply-template', access: 'key', body: { messages: [{ role: 'user', content: 'Hi' }] } },
  { method: 'POST', path: '/v1/sessions', access: 'key', body: {} },
  { method: 'GET', path: '/v1/sessions', access: 'key' },
  { method: 'GET', path: `/v1/sessions/${sessionId}`, access: 'key' },
  { method: 'DELETE', path: '/v1/sessions/0123456789abcdef0123456789abcdef', access: 'key' },
  { method: 'GET', path: '/v1/ws', access: 'key' },
  { method: 'POST', path: '/admin/static-answers/reload', access: 'admin' },
  { method: 'GET', path: '/health', access: 'public' },
  { method: 'GET', path: '/ready', access: 'public' },
  { method: 'GET', path: '/v1/stats', access: 'public' },
  { method: 'GET', path: '/metrics', access: 'public' },
  { method: 'GET', path: '/', access: 'public' },
  { method: 'GET', path: '/dashboard', access: 'public' },
  { method: 'GET', path: '/static/chat.js', access: 'public' },
];

// Other spellings of `path` that some proxy or client may send.
function variants(path) {
  const out = new Set([
    `/${path}`,                                   // leading //
    `${path}/`,                                   // trailing /
    `/.${path}`,                                  // /./
    `/x/..${path}`,                               // /x/../
    path.replace(/^(\/[^/]*)\//, '$1//'),         // an inner //
    path.length > 1 ? path.replace(/\/([^/]*)$/, '%2F$1') : '/%2F',  // the last / escaped
    `/%2E${path}`,                                // an escaped dot segment
    path.toUpperCase(),
  ]);
  out.delete(path);
  return [...out].filter((p) => p.startsWith('/'));
}

test('each route answers with the protection it declares, for no key, a plain key and an admin key', async () => {
  for (const r of routes()) {
    const none = await request(r.method, r.path, undefined, r.body);
    const user = await request(r.method, r.path, USER, r.body);
    const admin = await request(r.method, r.path, ADMIN, r.body);
    const what = `${r.method} ${r.path}`;
    if (r.access === 'public') {
      for (const res of [none, user, admin]) assert.ok(res.status < 400, `${what}: ${res.status} ${res.text}`);
    } else if (r.access === 'key') {
      assert.equal(none.status, 401, what);
      if (r.anthropic) assert.equal(none.json.error.type, 'authentication_error', what);
      else assert.equal(none.json.error.code, 'invalid_api_key', what);
      for (const res of [user, admin]) assert.ok(![401, 403].includes(res.status), `${what}: ${res.status} ${res.text}`);
    } else {
      assert.equal(none.status, 401, what);
      assert.equal(user.status, 403, what);
      assert.equal(user.json.error.code, 'permission_denied', what);
      assert.equal(admin.status, 200, `${what}: ${admin.text}`);
    }
  }
});

test('no other spelling of a route path reaches a handler, with or without a key', async () => {
  let checked = 0;
  for (const r of routes()) {
    for (const path of variants(r.path)) {
      for (const key of [undefined, USER, ADMIN]) {
        const res = await request(r.method, path, key, r.body);
        const what = `${r.method} ${path} (${key ?? 'no key'})`;
        assert.equal(res.status, 404, `${what}: ${res.status} ${res.text}`);
        assert.equal(res.json.error.code, 'not_found', what);
        checked += 1;
      }
    }
  }
  assert.ok(checked > 300, `only ${checked} requests`);
});

test('the blocklist and validation hold on every route that takes a body', async () => {
  const blocked = { messages: [{ role: 'user', content: 'some forbidden   words here' }], max_tokens: 2 };
  const bodies = {
    '/v1/chat/completions': [blocked, { ...chat, user: 'a\u0001b' }],
    '/v1/completions': [{ prompt: 'forbidden words', max_tokens: 2 }, { prompt: 'Hi', user: 'a\u0001b' }],
    '/chat': [{ prompts: ['forbidden words'], max_tokens: 2 }, { prompts: ['Hi'], user: 'a\u0001b' }],
    '/v1/sessions': [{ system_prompt: 'forbidden words' }, { user: 'a\u0001b' }],
    '/v1/embeddings': [{ input: ['fine', 'forbidden words'] }, { input: 'Hi', user: 'a\u0001b' }],
    '/v1/messages': [blocked, { ...chat, metadata: { user_id: 'a\u0001b' } }],
    '/v1/responses': [{ input: [{ role: 'user', content: 'forbidden words' }] }, { input: 'Hi', metadata: { k: 'a\u0001b' } }],
  };
  for (const [path, [body, controlBody]] of Object.entries(bodies)) {
    const res = await request('POST', path, USER, body);
    assert.equal(res.status, 400, `${path}: ${res.text}`);
    if (path === '/v1/messages') assert.match(res.json.error.message, /content policy/, path);
    else assert.equal(res.json.error.code, 'content_policy_violation', path);
    const control = await request('POST', path, USER, controlBody);
    assert.equal(control.status, 400, path);
    assert.match(control.text, /control characters/, path);
  }
});

test('x-api-key is a key like the bearer token, on every key route', async () => {
  for (const r of routes().filter((x) => x.access === 'key')) {
    const res = await request(r.method, r.path, `x-api-key:${USER}`, r.body);
    assert.ok(![401, 403].includes(res.status), `${r.method} ${r.path}: ${res.status} ${res.text}`);
    const wrong = await request(r.method, r.path, 'x-api-key:wrong', r.body);
    assert.equal(wrong.status, 401, `${r.method} ${r.path}`);
  }
  const admin = await request('POST', '/admin/static-answers/reload', `x-api-key:${ADMIN}`);
  assert.equal(admin.status, 200);
});

test('admin routes are off when no admin key is configured', async () => {
  const plain = await startServer(['--api-key', USER]);
  try {
    const res = await fetch(`${plain.url}/admin/static-answers/reload`, {
      method: 'POST', headers: { authorization: `Bearer ${USER}` } });
    assert.equal(res.status, 403);
    assert.equal((await res.json()).error.code, 'admin_disabled');
  } finally {
    await plain.stop();
  }
});

test('HEAD /health and /ready answer 200 with no body, as load balancers probe', async () => {
  for (const path of ['/health', '/ready']) {
    const res = await request('HEAD', path);
    assert.equal(res.status, 200, path);
    assert.equal(res.text, '', path);
    assert.ok(Number(res.headers['content-length']) > 0, path);
  }
});

// Resolves with the HTTP status a WebSocket upgrade got (101 on success).
function upgradeStatus(path, headers = {}) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${server.port}${path}`, { headers });
    ws.on('open', () => { ws.close(); resolve(101); });
    ws.on('unexpected-response', (req, res) => { resolve(res.statusCode); req.destroy(); });
    ws.on('error', reject);
  });
}

test('WebSocket upgrades need a key on /v1/ws and are not taken on other spellings', async () => {
  assert.equal(await upgradeStatus('/v1/ws'), 401);
  assert.equal(await upgradeStatus(`/v1/ws?api_key=${USER}`), 101);
  assert.equal(await upgradeStatus('/v1/ws', { authorization: `Bearer ${ADMIN}` }), 101);
  // Only the spellings a WebSocket URL keeps (the client resolves '.' and '..').
  const kept = variants('/v1/ws').filter((p) => new URL(`ws://h${p}`).pathname === p);
  assert.ok(kept.length >= 4);
  for (const path of kept) {
    assert.equal(await upgradeStatus(path), 404, path);
    assert.equal(await upgradeStatus(`${path}?api_key=${USER}`), 404, path);
  }
});

// The WebSocket's messages, until one has `finished` or `error`.
function wsTurn(url, message) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    const got = [];
    ws.on('open', () => ws.send(JSON.stringify(message)));
    ws.on('message', (data) => {
      const m = JSON.parse(data);
      got.push(m);
      if (m.finished || m.error) { ws.close(); resolve(got); }
    });
    ws.on('error', reject);
  });
}

test('a WebSocket session turn is bound to the key of its upgrade request', async () => {
  const own = (await request('POST', '/v1/sessions', ADMIN, {})).json.id;
  const message = { session_id: own, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 2 };
  const other = await wsTurn(`ws://127.0.0.1:${server.port}/v1/ws?api_key=${USER}`, message);
  assert.equal(other.at(-1).error?.code, 'session_not_found');
  const mine = await wsTurn(`ws://127.0.0.1:${server.port}/v1/ws?api_key=${ADMIN}`, message);
  assert.equal(mine.at(-1).finished, true, JSON.stringify(mine.at(-1)));
  assert.equal(mine.at(-1).session_id, own);
});
