// Several models in one server (docs/api.md, "Several models"), through the
// official OpenAI client: the bundled model loaded at start, a random-weights
// mkmodel model (slow enough for a stream to outlast the idle time) loaded on
// demand and unloaded when idle (--model-idle-unload 0.5).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, makeSlowModel, sleep, binary } from './server.mjs';

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
