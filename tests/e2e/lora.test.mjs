// LoRA adapters served by name (docs/lora.md): "model" picks an adapter,
// mixed adapters in one batch answer as each alone, adapters from --lora-dir
// load on first use, the LRU under --lora-memory, the admin routes to load
// and unload, the response cache kept apart per adapter, and sessions bound
// to their adapter.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import WebSocket from 'ws';
import { binary, makeRandomModel, startServer, sleep } from './server.mjs';

const BASE = 'stories260K';
const ADMIN_KEY = 'lora-admin-key';
const admin = { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_KEY}` };
let dir;
let server;
let client;
const adapterPath = (name) => join(dir, `${name}.gguf`);

function mkadapter(base, out, seed) {
  execFileSync(binary, ['mkadapter', base, out, '--rank', '8', '--strength', '2', '--seed', String(seed)],
    { stdio: 'ignore' });
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'parley-lora-'));
  mkdirSync(join(dir, 'lib'));
  const base = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'models', 'stories260K.gguf');
  mkadapter(base, adapterPath('a'), 1);
  ['b', 'c', 'd'].forEach((name, i) => mkadapter(base, join(dir, 'lib', `${name}.gguf`), 2 + i));
  mkadapter(base, adapterPath('e'), 5);
  const other = makeRandomModel('other', ['--dim', '96', '--layers', '2', '--heads', '4']);
  mkadapter(other.path, adapterPath('other'), 6);
  other.remove();
  writeFileSync(adapterPath('truncated'), readFileSync(adapterPath('e')).subarray(0, 3000));
  server = await startServer(['--lora', `a=${adapterPath('a')}`, '--lora-dir', join(dir, 'lib'),
    '--admin-key', ADMIN_KEY]);
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});
after(async () => {
  assert.equal((await server.stop()).code, 0);
  rmSync(dir, { recursive: true, force: true });
});

const models = async (url = server.url) => (await (await fetch(`${url}/v1/models`)).json()).data;
const post = (path, body, headers = { 'content-type': 'application/json' }) =>
  fetch(`${server.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });

// A streamed greedy completion's text, with the model it echoes.
async function streamed(model, prompt, extra = {}) {
  const stream = await client.completions.create({ model, prompt, max_tokens: 24, temperature: 0, stream: true,
    cache: false, ...extra });
  let text = '';
  let echoed;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.text ?? '';
    echoed = chunk.model;
  }
  return { text, model: echoed };
}

test('/v1/models lists the adapters with their parent; --lora-dir ones load on first use', async () => {
  const list = await models();
  assert.deepEqual(list.map((m) => m.id), [BASE, 'a', 'b', 'c', 'd']);
  for (const m of list.slice(1)) assert.equal(m.parent, BASE);
  assert.equal(list[1].root, adapterPath('a'));
  assert.deepEqual(list.slice(1).map((m) => m.loaded), [true, false, false, false]);
  const one = await client.models.retrieve('c');
  assert.equal(one.parent, BASE);
  await streamed('c', 'Lily');
  assert.equal((await models()).find((m) => m.id === 'c').loaded, true);
});

test('16 streams over 4 adapters and the base answer as each alone; adapters change the answer', async () => {
  const names = [BASE, 'a', 'b', 'c', 'd'];
  const jobs = Array.from({ length: 16 }, (_, i) => ({ model: names[i % 5], prompt: `Once upon a time ${i % 4}` }));
  const alone = [];
  for (const j of jobs) alone.push(await streamed(j.model, j.prompt));
  const together = await Promise.all(jobs.map((j) => streamed(j.model, j.prompt)));
  jobs.forEach((j, i) => {
    assert.equal(together[i].text, alone[i].text, `request ${i} (${j.model})`);
    assert.equal(together[i].model, j.model);
  });
  const base = await streamed(BASE, 'Once upon a time 0');
  for (const name of names.slice(1)) assert.notEqual((await streamed(name, 'Once upon a time 0')).text, base.text, name);
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  assert.match(metrics, /parley_lora_requests_total\{adapter="b"\} [1-9]/);
  assert.match(metrics, /parley_lora_adapters_loaded 4/);
});

test('chat, messages, responses, /chat and the response cache keep adapters apart', async () => {
  const body = { messages: [{ role: 'user', content: 'Tell me about a red ball.' }], max_tokens: 24, temperature: 0 };
  const chat = (model) => post('/v1/chat/completions', { ...body, model });
  const base = await chat(BASE);
  assert.equal(base.headers.get('x-parley-cache'), 'miss');
  const baseText = (await base.json()).choices[0].message.content;
  const first = await chat('a');
  assert.equal(first.headers.get('x-parley-cache'), 'miss');
  const firstBody = await first.json();
  assert.equal(firstBody.model, 'a');
  assert.notEqual(firstBody.choices[0].message.content, baseText);
  const again = await chat('a');
  assert.equal(again.headers.get('x-parley-cache'), 'hit');
  assert.equal((await again.json()).choices[0].message.content, firstBody.choices[0].message.content);
  assert.equal((await chat('b')).headers.get('x-parley-cache'), 'miss');
  const half = await post('/v1/chat/completions', { ...body, model: 'a', lora_scale: 0.5 });
  assert.equal(half.headers.get('x-parley-cache'), 'miss');

  const messages = await (await post('/v1/messages', { model: 'a', max_tokens: 24, temperature: 0,
    messages: body.messages })).json();
  assert.equal(messages.model, 'a');
  assert.equal(messages.content[0].text, firstBody.choices[0].message.content);
  const responses = await (await post('/v1/responses', { model: 'a', max_output_tokens: 24, temperature: 0,
    input: body.messages[0].content })).json();
  assert.equal(responses.model, 'a');
  assert.equal(responses.output[0].content[0].text, firstBody.choices[0].message.content);

  const batch = async (model) => (await (await post('/chat', { prompts: ['Tell me about a red ball.'], model,
    max_tokens: 24, temperature: 0 })).json()).results[0];
  assert.equal(await batch('a'), firstBody.choices[0].message.content);
  assert.equal(await batch(BASE), baseText);
});

test('lora_scale: the same override on chat, completions, messages, responses, /chat and WebSocket', async () => {
  const content = 'Tell me about a green hat.';
  const common = { model: 'a', temperature: 0 };  // /v1/messages and /v1/responses take no "cache"
  const chat = async (extra) => (await (await post('/v1/chat/completions', { ...common, cache: false, max_tokens: 24,
    messages: [{ role: 'user', content }], ...extra })).json()).choices[0].message.content;
  const half = await chat({ lora_scale: 0.5 });
  assert.notEqual(half, await chat({}));
  assert.equal(await chat({ lora_scale: 1 }), await chat({}));  // the adapter's own scale
  const messages = await (await post('/v1/messages', { ...common, max_tokens: 24, lora_scale: 0.5,
    messages: [{ role: 'user', content }] })).json();
  assert.equal(messages.content[0].text, half);
  const responses = await (await post('/v1/responses', { ...common, max_output_tokens: 24, lora_scale: 0.5,
    input: content })).json();
  assert.equal(responses.output[0].content[0].text, half);
  const batch = await (await post('/chat', { ...common, cache: false, max_tokens: 24, lora_scale: 0.5,
    prompts: [content] })).json();
  assert.equal(batch.results[0], half);
  const ws = new WebSocket(`${server.url.replace('http', 'ws')}/v1/ws`);
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
  let text = '';
  const done = new Promise((resolve) => ws.on('message', (data) => {
    const m = JSON.parse(data.toString());
    if (m.finished) resolve(m);
    else text += m.text;
  }));
  ws.send(JSON.stringify({ ...common, cache: false, max_tokens: 24, lora_scale: 0.5,
    messages: [{ role: 'user', content }] }));
  assert.equal((await done).error, undefined);
  ws.close();
  assert.equal(text, half);
  // Out of range, or without an adapter: 400 naming lora_scale on every route.
  for (const [path, body] of [['/v1/messages', { max_tokens: 4, messages: [{ role: 'user', content }] }],
    ['/v1/responses', { max_output_tokens: 4, input: content }]]) {
    for (const bad of [{ model: 'a', lora_scale: 99 }, { model: BASE, lora_scale: 1 }, { lora_scale: 0.5 }]) {
      const r = await post(path, { ...body, ...bad });
      assert.equal(r.status, 400, `${path} ${JSON.stringify(bad)}`);
      assert.match(JSON.stringify(await r.json()), /lora_scale/);
    }
  }
});

test('--lora-dir is looked at again: files added later are offered, removed ones go once not loaded', async () => {
  const lib = join(dir, 'lib');
  copyFileSync(join(lib, 'b.gguf'), join(lib, 'late.gguf'));
  assert.ok((await models()).some((m) => m.id === 'late' && m.loaded === false), 'listed before any use');
  assert.equal((await streamed('late', 'Lily')).text, (await streamed('b', 'Lily')).text);
  copyFileSync(join(lib, 'b.gguf'), join(lib, 'later.gguf'));
  assert.equal((await streamed('later', 'Lily')).model, 'later');  // found when named, unlisted until then
  copyFileSync(join(lib, 'b.gguf'), join(lib, 'unused.gguf'));
  assert.ok((await models()).some((m) => m.id === 'unused'));
  unlinkSync(join(lib, 'unused.gguf'));
  unlinkSync(join(lib, 'late.gguf'));
  await assert.rejects(client.completions.create({ model: 'unused', prompt: 'Hi', max_tokens: 4 }),
    (e) => e.status === 404 && e.code === 'model_not_found');
  assert.equal((await streamed('late', 'Lily')).model, 'late');  // loaded: it serves until evicted
  const ids = (await models()).map((m) => m.id);
  assert.ok(ids.includes('late') && !ids.includes('unused'), ids.join());
  unlinkSync(join(lib, 'later.gguf'));
});

test('a WebSocket request runs with the adapter it names', async () => {
  const ws = new WebSocket(`${server.url.replace('http', 'ws')}/v1/ws`);
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
  let text = '';
  const done = new Promise((resolve) => ws.on('message', (data) => {
    const m = JSON.parse(data.toString());
    if (m.error || m.finished) resolve(m);
    else text += m.text;
  }));
  ws.send(JSON.stringify({ model: 'b', prompt: 'Lily', max_tokens: 24, temperature: 0 }));
  assert.equal((await done).finished, true);
  ws.close();
  assert.equal(text, (await streamed('b', 'Lily')).text);
  assert.notEqual(text, (await streamed(BASE, 'Lily')).text);
});

test('a session keeps the adapter it was created with', async () => {
  const created = await post('/v1/sessions', { model: 'a', system_prompt: 'Be brief.' });
  assert.equal(created.status, 201);
  const session = await created.json();
  assert.equal(session.model, 'a');
  const turn = (model) => post('/v1/chat/completions', { session_id: session.id, model, max_tokens: 8, temperature: 0,
    messages: [{ role: 'user', content: 'Hello' }] });
  const ok = await turn('a');
  assert.equal(ok.status, 200);
  assert.equal((await ok.json()).model, 'a');
  for (const other of [BASE, 'b', undefined]) {
    const refused = await turn(other);
    assert.equal(refused.status, 400, String(other));
    assert.equal((await refused.json()).error.param, 'model');
  }
  assert.equal((await post('/v1/sessions', { model: 'nope' })).status, 404);
  const base = await (await post('/v1/sessions', {})).json();
  assert.equal(base.model, BASE);
});

test('unknown adapters are 404; bad lora_scale and adapters on base-only routes are 400', async () => {
  await assert.rejects(client.completions.create({ model: 'nope', prompt: 'Hi', max_tokens: 4 }),
    (e) => e.status === 404 && e.code === 'model_not_found');
  await assert.rejects(client.completions.create({ model: 'a', prompt: 'Hi', max_tokens: 4, lora_scale: 99 }),
    (e) => e.status === 400 && e.param === 'lora_scale');
  await assert.rejects(client.completions.create({ model: BASE, prompt: 'Hi', max_tokens: 4, lora_scale: 1 }),
    (e) => e.status === 400 && e.param === 'lora_scale');
  await assert.rejects(client.embeddings.create({ model: 'a', input: 'Hi' }),
    (e) => e.status === 400 && e.param === 'model');
});

test('the admin routes load and unload adapters; bad files are refused with the reason', async () => {
  assert.equal((await post('/v1/load_lora_adapter', { lora_name: 'e', lora_path: adapterPath('e') })).status, 401);  // no admin key
  const loaded = await post('/v1/load_lora_adapter', { lora_name: 'e', lora_path: adapterPath('e') }, admin);
  assert.equal(loaded.status, 200);
  assert.equal((await models()).find((m) => m.id === 'e').loaded, true);
  assert.equal((await streamed('e', 'Lily')).model, 'e');

  const other = await post('/v1/load_lora_adapter', { lora_name: 'o', lora_path: adapterPath('other') }, admin);
  assert.equal(other.status, 400);
  assert.match((await other.json()).error.message, /shape|does not exist/);
  const truncated = await post('/v1/load_lora_adapter', { lora_name: 't', lora_path: adapterPath('truncated') }, admin);
  assert.equal(truncated.status, 400);
  assert.equal((await truncated.json()).error.param, 'lora_path');
  assert.equal((await models()).some((m) => m.id === 'o' || m.id === 't'), false);

  assert.equal((await post('/v1/unload_lora_adapter', { lora_name: 'e' }, admin)).status, 200);
  await assert.rejects(client.completions.create({ model: 'e', prompt: 'Hi', max_tokens: 4 }), (e) => e.status === 404);
  assert.equal((await post('/v1/unload_lora_adapter', { lora_name: 'e' }, admin)).status, 404);
});

test('an adapter in use by a running stream cannot be unloaded (409) until it ends', async () => {
  const controller = new AbortController();
  // Under a window KV policy the stream runs until it is cancelled.
  const response = await fetch(`${server.url}/v1/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, signal: controller.signal,
    body: JSON.stringify({ model: 'd', prompt: 'Once upon a time', max_tokens: 1000000, ignore_eos: true,
      stream: true, kv_retention: { policy: 'window', window: 64 } }),
  });
  const reader = response.body.getReader();
  await reader.read();  // the stream is running
  const refused = await post('/v1/unload_lora_adapter', { lora_name: 'd' }, admin);
  assert.equal(refused.status, 409);
  assert.match((await refused.json()).error.message, /in use/);
  controller.abort();
  let status = 409;
  for (let i = 0; i < 200 && status === 409; ++i) {
    await sleep(25);
    status = (await post('/v1/unload_lora_adapter', { lora_name: 'd' }, admin)).status;
  }
  assert.equal(status, 200);
});

test('under a small --lora-memory the least recently used idle adapter is evicted', async () => {
  const small = await startServer(['--lora-dir', join(dir, 'lib'), '--lora-memory', '1']);
  try {
    const c = new OpenAI({ baseURL: `${small.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const ask = (model) => c.completions.create({ model, prompt: 'Lily', max_tokens: 8, temperature: 0, cache: false });
    const first = await ask('b');
    await ask('c');
    const loaded = Object.fromEntries((await models(small.url)).slice(1).map((m) => [m.id, m.loaded]));
    assert.deepEqual(loaded, { b: false, c: true, d: false });
    assert.equal((await ask('b')).choices[0].text, first.choices[0].text);  // loaded again, the same answers
    const metrics = await (await fetch(`${small.url}/metrics`)).text();
    assert.match(metrics, /parley_lora_adapter_evictions_total 2/);
    assert.match(metrics, /parley_lora_adapter_loads_total 3/);
  } finally {
    assert.equal((await small.stop()).code, 0);
  }
});

test('a --lora adapter for another base, or named as the base, fails the start', async () => {
  await assert.rejects(startServer(['--lora', `o=${adapterPath('other')}`]), /shape|does not exist/);
  await assert.rejects(startServer(['--lora', `${BASE}=${adapterPath('a')}`]), /base model/);
});
