// Several models in one server (docs/api.md, "Several models"), through the
// official OpenAI client and the WebSocket API: the bundled model loaded at
// start, a random-weights mkmodel model (slow enough for a stream to outlast
// the idle time) loaded on demand and unloaded when idle
// (--model-idle-unload 0.5); --chat-template and --fallback-model per model.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import WebSocket from 'ws';
import { startServer, makeSlowModel, sleep, binary, waitForStats } from './server.mjs';

const bundled = 'models/stories260K.gguf';
let slow;
let multi;
let single;
let client;
const request = { model: 'slow', messages: [{ role: 'user', content: 'Hello there' }], max_tokens: 16, temperature: 0 };

async function models() {
  const list = await client.models.list();
  return Object.fromEntries(list.data.map((m) => [m.id, m]));
}

async function metrics() {
  return (await fetch(`${multi.url}/metrics`)).text();
}

// The value of one sample line of /metrics ("name{labels}" exactly), or undefined.
function sample(text, series) {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

before(async () => {
  slow = makeSlowModel();
  multi = await startServer(['--model', `stories260K=${bundled}`, '--model', `slow=${slow.path}`, '--model-idle-unload', '0.5']);
  single = await startServer(['--model', slow.path]);
  client = new OpenAI({ baseURL: `${multi.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});
after(async () => {
  for (const s of [multi, single]) assert.equal((await s.stop()).code, 0);
  slow.remove();
});

test('/v1/models lists every model; only the default is loaded at start', async () => {
  const m = await models();
  assert.deepEqual(Object.keys(m).sort(), ['slow', 'stories260K']);
  assert.equal(m.stories260K.loaded, true);
  assert.equal(m.slow.loaded, false);
  assert.equal(typeof m.stories260K.max_model_len, 'number');
  const one = await client.models.retrieve('slow');
  assert.equal(one.id, 'slow');
});

test('a model loads on demand and answers as a server of that model alone does', async () => {
  const r = await client.chat.completions.create(request);
  assert.equal(r.model, 'slow');
  const alone = new OpenAI({ baseURL: `${single.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  const expected = await alone.chat.completions.create(request);
  assert.equal(r.choices[0].message.content, expected.choices[0].message.content);
  assert.deepEqual(r.usage, expected.usage);
  const text = await metrics();
  assert.ok(sample(text, 'parley_model_loads_total') >= 1);
  assert.ok(sample(text, 'parley_model_load_seconds_total') > 0);
  assert.equal(sample(text, 'parley_model_load_waiting'), 0);
  const stats = await (await fetch(`${multi.url}/v1/stats`)).json();
  assert.ok(stats.model_set.loads >= 1);
  assert.equal(typeof stats.models.stories260K.generated_tokens, 'number');
});

test('a model answering a stream stays; idle, it is unloaded after --model-idle-unload', async () => {
  const stream = await client.chat.completions.create({ ...request, max_tokens: 4000, ignore_eos: true, stream: true });
  const chunks = stream[Symbol.asyncIterator]();
  await chunks.next();
  await sleep(800);  // past the idle time and its check, with the stream open
  assert.equal((await models()).slow.loaded, true);
  const text = await metrics();
  assert.equal(sample(text, 'parley_model_loaded{model="slow"}'), 1);
  assert.ok(sample(text, 'parley_generated_tokens_total{model="slow"}') >= 1);
  assert.ok(sample(text, 'parley_generated_tokens_total{model="stories260K"}') >= 0);
  stream.controller.abort();  // the server cancels the rest
  let loaded = true;
  for (let i = 0; i < 300 && loaded; ++i) {
    await sleep(50);
    loaded = (await models()).slow.loaded;
  }
  assert.equal(loaded, false);
  const after = await metrics();
  assert.equal(sample(after, 'parley_model_loaded{model="slow"}'), 0);
  assert.ok(sample(after, 'parley_model_idle_unloads_total') >= 1);
});

test('an unknown model is 404 model_not_found', async () => {
  await assert.rejects(client.chat.completions.create({ ...request, model: 'nope' }), (e) => {
    assert.equal(e.status, 404);
    assert.equal(e.code, 'model_not_found');
    return true;
  });
  await assert.rejects(client.models.retrieve('nope'), (e) => e.status === 404);
});

test('Anthropic\'s Messages API and /tokenize follow the body\'s model too', async () => {
  const post = (path, body) => fetch(`${multi.url}${path}`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const message = { messages: [{ role: 'user', content: 'Hi' }], max_tokens: 4 };
  const r = await post('/v1/messages', { ...message, model: 'slow' });
  assert.equal(r.status, 200);
  assert.equal((await r.json()).model, 'slow');
  const missing = await post('/v1/messages', { ...message, model: 'nope' });
  assert.equal(missing.status, 404);
  assert.equal((await missing.json()).type, 'error');  // Anthropic's shape
  // The default model's routes would refuse 'slow' (404): a 200 is the slow model's.
  const tokenize = (model) => post('/tokenize', { model, content: 'Once upon a time' });
  assert.equal((await tokenize('slow')).status, 200);
  assert.equal((await tokenize('nope')).status, 404);
});

// A WebSocket whose ask(message) resolves with the end message of the request with that "id"
// (and the text streamed before it).
async function openSocket(url) {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/ws`);
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
  const waiting = new Map();
  const texts = new Map();
  ws.on('message', (data) => {
    const m = JSON.parse(data.toString());
    const id = m.id ?? null;
    if (!m.finished) return void texts.set(id, (texts.get(id) ?? '') + m.text);
    waiting.get(id)?.({ ...m, text: texts.get(id) ?? '' });
    waiting.delete(id);
    texts.delete(id);
  });
  return {
    ask: (message) => new Promise((resolve) => { waiting.set(message.id ?? null, resolve); ws.send(JSON.stringify(message)); }),
    send: (message) => ws.send(JSON.stringify(message)),
    close: () => ws.close(),
  };
}

async function waitUnloaded(name) {
  for (let i = 0; i < 300 && (await models())[name].loaded; ++i) await sleep(50);
  assert.equal((await models())[name].loaded, false);
}

test('a WebSocket message names its model as an HTTP request does: loaded on demand; unknown is model_not_found', async () => {
  const prompt = { prompt: 'Once upon a time', max_tokens: 12, temperature: 0, cache: false };
  const expected = {};
  for (const model of ['slow', 'stories260K']) expected[model] = (await client.completions.create({ ...prompt, model })).choices[0].text;
  await waitUnloaded('slow');
  const loads = sample(await metrics(), 'parley_model_loads_total');
  const socket = await openSocket(multi.url);
  try {
    for (const model of ['slow', 'stories260K', 'slow']) {
      const end = await socket.ask({ ...prompt, model, id: model });
      assert.equal(end.error, undefined, JSON.stringify(end));
      assert.equal(end.id, model);
      assert.equal(end.text, expected[model], model);
    }
    assert.equal(sample(await metrics(), 'parley_model_loads_total'), loads + 1);  // loaded by the socket's first message
    const missing = await socket.ask({ ...prompt, model: 'nope', id: 'x' });
    assert.equal(missing.error.code, 'model_not_found');
    assert.equal(missing.error.param, 'model');
    assert.equal(missing.id, 'x');
    // (A chat's text is not compared: on random weights a prefix cache hit may change greedy near-ties.)
    const chat = await socket.ask({ ...request, ignore_eos: true, id: 'chat' });
    assert.equal(chat.error, undefined, JSON.stringify(chat));
    assert.deepEqual([chat.finish_reason, chat.usage.completion_tokens], ['length', 16]);
  } finally {
    socket.close();
  }
});

test('a WebSocket request waiting for its model keeps the socket busy, and a cancel ends it "cancelled"', async () => {
  await waitUnloaded('slow');
  const socket = await openSocket(multi.url);
  try {
    const long = socket.ask({ prompt: 'Once', max_tokens: 4000, ignore_eos: true, model: 'slow', id: 'long' });
    const busy = await socket.ask({ prompt: 'Once', max_tokens: 2, id: 'second' });  // while loading or running
    assert.equal(busy.error?.code, 'busy', JSON.stringify(busy));
    socket.send({ cancel: true });
    const end = await long;
    assert.equal(end.finish_reason, 'cancelled', JSON.stringify(end));
  } finally {
    socket.close();
  }
});

test('--chat-template NAME=FILE gives a model its own template; the default model keeps its own', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-template-'));
  const file = join(dir, 'slow.jinja');
  // A long preamble: the prompt has many more tokens than the plain format's.
  const preamble = 'A conversation between a curious user and a helpful assistant who answers in full sentences.\n';
  writeFileSync(file, `${preamble}{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}[assistant]`);
  const server = await startServer(['--model', `stories260K=${bundled}`, '--model', `slow=${slow.path}`,
    '--chat-template', `slow=${file}`]);
  try {
    const render = async (model) => (await (await fetch(`${server.url}/apply-template`, { method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: request.messages }) })).json()).prompt;
    assert.equal(await render('slow'), `${preamble}[user] Hello there\n[assistant]`);
    assert.equal(await render('stories260K'), 'User: Hello there\nAssistant:');  // the plain format, as before
    const c = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const templated = await c.chat.completions.create(request);
    const plain = await client.chat.completions.create(request);  // the same model without the template
    assert.ok(templated.usage.prompt_tokens > plain.usage.prompt_tokens + 10,
      `${templated.usage.prompt_tokens} vs ${plain.usage.prompt_tokens}`);
  } finally {
    assert.equal((await server.stop()).code, 0);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('--chat-template and --fallback-model naming no model, or a missing file, fail the start', async () => {
  const args = ['--model', `stories260K=${bundled}`, '--model', `slow=${slow.path}`];
  await assert.rejects(startServer([...args, '--chat-template', 'nope=chatml']), /--chat-template: no model is named 'nope'/);
  await assert.rejects(startServer([...args, '--fallback-model', `nope=${bundled}`]), /--fallback-model: no model is named 'nope'/);
  await assert.rejects(startServer([...args, '--fallback-model', 'slow=/nonexistent.gguf']), /cannot open/);
  await assert.rejects(startServer([...args, '--chat-template', 'chatml', '--chat-template', 'stories260K=chatml']),
    /two values/);
});

test('--fallback-model NAME=PATH answers that model\'s requests in its degraded mode', async () => {
  const server = await startServer(['--model', `stories260K=${bundled}`, '--model', `slow=${slow.path}`,
    '--fallback-model', `slow=${bundled}`, '--max-running', '1', '--degrade-queue-wait-ms', '300', '--degrade-hold', '1']);
  const post = (body, signal) => fetch(`${server.url}/v1/completions`, { method: 'POST', signal,
    headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'slow', ...body }) });
  try {
    const plain = await post({ prompt: 'Once', max_tokens: 2 });
    assert.equal(plain.headers.get('x-parley-degraded'), null);
    await plain.json();
    // One long request runs; a second waits behind it (max-running 1) past the threshold.
    const abort = new AbortController();
    const long = [0, 1].map((i) => post({ prompt: `Once ${i}`, max_tokens: 4000, ignore_eos: true, stream: true },
      abort.signal).then((r) => r.text()).catch(() => null));
    const degraded = await waitForStats(server.url, (s) => s.models.slow?.degraded === 1, 8000);
    assert.equal(degraded.models.slow.degraded, 1, 'slow entered degraded mode');
    assert.equal(degraded.degraded, 0, 'the default model did not');
    const fallback = await post({ prompt: 'Once', max_tokens: 4 });
    assert.equal(fallback.status, 200);
    assert.equal(fallback.headers.get('x-parley-degraded'), '1');
    assert.equal((await fallback.json()).model, 'slow');
    abort.abort();
    await Promise.all(long);
  } finally {
    assert.equal((await server.stop()).code, 0);
  }
  const other = join(mkdtempSync(join(tmpdir(), 'parley-vocab-')), 'other.gguf');
  execFileSync(binary, ['mkmodel', '--dim', '64', '--layers', '1', '--heads', '2', '--vocab-size', '600', '-o', other],
    { stdio: 'ignore' });
  const refused = await startServer(['--model', `stories260K=${bundled}`, '--model', `slow=${slow.path}`,
    '--fallback-model', `slow=${other}`]);
  try {
    const r = await fetch(`${refused.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'slow', prompt: 'Once', max_tokens: 2 }) });
    assert.equal(r.status, 503);  // its load fails with the reason
    const error = (await r.json()).error;
    assert.equal(error.code, 'model_unavailable');
    assert.match(error.message, /vocabulary/);
  } finally {
    assert.equal((await refused.stop()).code, 0);
    rmSync(dirname(other), { recursive: true, force: true });
  }
});

test('concurrent requests to both models, the other one loading meanwhile', async () => {
  const prompt = { prompt: 'Once upon a time', max_tokens: 12, temperature: 0 };
  const expected = {};
  for (const model of ['slow', 'stories260K']) expected[model] = (await client.completions.create({ ...prompt, model })).choices[0].text;
  const asks = [];
  for (let i = 0; i < 6; ++i) asks.push(i % 2 ? 'slow' : 'stories260K');
  const answers = await Promise.all(asks.map((model) => client.completions.create({ ...prompt, model })));
  answers.forEach((r, i) => {
    assert.equal(r.model, asks[i]);
    assert.equal(r.choices[0].text, expected[asks[i]]);
  });
});

test('--models-dir serves its models but not adapters or tokenizers; --max-models evicts the least recent', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-models-'));
  const mk = (name) => execFileSync(binary, ['mkmodel', '--dim', '64', '--layers', '1', '--heads', '2', '-o', join(dir, name)],
    { stdio: 'ignore' });
  mk('a.gguf');
  mk('b.gguf');
  execFileSync(binary, ['mkadapter', join(dir, 'a.gguf'), join(dir, 'a-lora.gguf')], { stdio: 'ignore' });
  copyFileSync('/dev/null', join(dir, 'tokenizer.bin'));
  const server = await startServer(['--model', `stories260K=${bundled}`, '--models-dir', dir, '--max-models', '2']);
  try {
    const c = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const loaded = async () => Object.fromEntries((await c.models.list()).data.map((m) => [m.id, m.loaded]));
    assert.deepEqual(await loaded(), { stories260K: true, a: false, b: false });
    const ask = (model) => c.completions.create({ model, prompt: 'Once', max_tokens: 4, temperature: 0 });
    await ask('a');
    assert.deepEqual(await loaded(), { stories260K: true, a: true, b: false });
    await ask('b');  // a is idle and the least recently used: it makes room
    assert.deepEqual(await loaded(), { stories260K: true, a: false, b: true });
    await ask('stories260K');
    const stats = await (await fetch(`${server.url}/v1/stats`)).json();
    assert.equal(stats.model_set.evictions, 1);
    assert.equal(stats.model_set.loads, 2);
  } finally {
    assert.equal((await server.stop()).code, 0);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('shutdown ends a stream of a model loaded on demand with a final chunk, and exits 0', async () => {
  const server = await startServer(['--model', `stories260K=${bundled}`, '--model', `slow=${slow.path}`,
    '--shutdown-grace', '1']);
  const c = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  const stream = await c.chat.completions.create({ ...request, max_tokens: 3000, ignore_eos: true, stream: true });
  const chunks = [];
  const read = (async () => { for await (const chunk of stream) chunks.push(chunk); })();
  while (chunks.length === 0) await sleep(20);
  const stopped = server.stop();
  await read;
  const finish = chunks.flatMap((ch) => ch.choices).filter((ch) => ch.finish_reason).map((ch) => ch.finish_reason);
  assert.equal(finish.length, 1);
  assert.ok(['cancelled', 'length'].includes(finish[0]), finish[0]);  // 'length' on a host fast enough to finish in the grace
  assert.equal((await stopped).code, 0);
});
